"""Seeds of the Hugging Face fuzzer: realistic tokenizer files, built here with `tokenizers`.

Six `tokenizer.json` files, trained in moments on `CORPUS` (so no download and no file
of another project), the same in every process: byte-level BPE as GPT-2 and Llama 3
write it, a SentencePiece-like BPE with byte fallback behind a `Prepend`/`Replace`
normalizer as Llama 2's, WordPiece as BERT's, Unigram as T5's, and WordLevel. Beside
them, `tokenizer_config.json` files (a chat template as a string or as a list of named
templates, special tokens as strings and as AddedToken objects, `add_bos_token` and
`add_eos_token`), `chat_template.jinja`, a named `tool_use.jinja` and the legacy
`chat_template.json`. Each seed is a parsed JSON value (or a template's text), for the
mutations to work on.
"""

from __future__ import annotations

import json
import math
import random
from functools import cache
from typing import Any

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers import trainers as tr

#: Text to train on: a little of several scripts, code and chat markup.
CORPUS = """\
The quick brown fox jumps over the lazy dog while the cat sleeps in the sun.
Hello world! How are you doing today? I'm fine, thanks; and you've been well?
Tokenizers split text into pieces: words, parts of words, bytes and special markers.
def tokenize(text: str) -> list[int]:\n    return [ord(c) for c in text]  # 123 456
Grüße aus München: Äpfel, Öl und Übermut kosten 3,50 € pro Stück.
Les élèves étudient la grammaire française près de la fenêtre, à midi.
你好，世界！今天天气很好，我们去公园散步吧。
こんにちは、世界。今日はいい天気ですね。
Привет, мир! Как дела? Всё хорошо, спасибо.
<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>
[INST] Write a haiku about autumn leaves. [/INST] Red leaves drift and fall 🍂
{"role": "tool", "content": "{\\"temperature\\": 21.5, \\"unit\\": \\"celsius\\"}"}
"""

SPACE = "▁"
#: Llama 3's pre-tokenizer regex (contractions, letters, up to three digits, the rest).
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
CHAT_MARKERS = ["<|im_start|>", "<|im_end|>"]


def corpus_lines(count: int = 600) -> list[str]:
    """`CORPUS`'s lines, and their words shuffled into more lines (the same every time)."""
    rng = random.Random("corpus")
    lines = CORPUS.splitlines()
    words = CORPUS.split()
    return lines + [" ".join(rng.choices(words, k=rng.randint(3, 16))) for _ in range(count)]


def _spec(tokenizer: Tokenizer) -> dict[str, Any]:
    return json.loads(tokenizer.to_str())


def byte_level_bpe(llama3: bool) -> dict[str, Any]:
    """GPT-2 (ByteLevel with its own regex) or Llama 3 (a Split regex, then ByteLevel)."""
    tokenizer = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=not llama3)
    tokenizer.pre_tokenizer = (
        pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(LLAMA3_SPLIT), "isolated"), byte_level])
        if llama3
        else byte_level
    )
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>", *CHAT_MARKERS]
    trainer = tr.BpeTrainer(
        vocab_size=800,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus_lines(), trainer)
    if llama3:
        tokenizer.post_processor = processors.TemplateProcessing(
            single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", 0)]
        )
    else:
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    return _spec(tokenizer)


def sentencepiece_bpe() -> dict[str, Any]:
    """Llama 2: `Prepend("▁")` and `Replace(" ", "▁")`, BPE with byte fallback, no
    pre-tokenizer; `<0x00>`..`<0xFF>` in the vocabulary after `<unk>`, `<s>`, `</s>`."""
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)]
    )
    # Trained on words that start at each "▁", as SentencePiece's pieces do.
    tokenizer.pre_tokenizer = pre_tokenizers.Split(SPACE, "merged_with_next")
    trainer = tr.BpeTrainer(
        vocab_size=700, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False
    )
    tokenizer.train_from_iterator(corpus_lines(), trainer)
    tokenizer.pre_tokenizer = None
    tokenizer.decoder = decoders.Sequence(
        [
            decoders.Replace(SPACE, " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", 1)]
    )
    spec = _spec(tokenizer)
    learned = sorted(spec["model"]["vocab"].items(), key=lambda item: item[1])[3:]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    vocab.update({f"<0x{byte:02X}>": 3 + byte for byte in range(256)})
    vocab.update({token: 259 + rank for rank, (token, _) in enumerate(learned)})
    spec["model"]["vocab"] = vocab
    return spec


def _bpe_vocabulary(tokenizer: Tokenizer, size: int, specials: list[str], **options: Any) -> None:
    """Train `tokenizer` (its normaliser and pre-tokenizer set) as BPE: the BPE trainer
    gives the same vocabulary in every process, which the WordPiece and Unigram trainers
    do not (they break ties in hash-map order), and the cases must be reproducible."""
    tokenizer.model = models.BPE(**options)
    trainer = tr.BpeTrainer(
        vocab_size=size, special_tokens=specials, show_progress=False, **options
    )
    tokenizer.train_from_iterator(corpus_lines(), trainer)


def wordpiece() -> dict[str, Any]:
    """BERT: its normalizer and pre-tokenizer, WordPiece over the pieces BPE learnt, each
    also as a continuation (`##piece`), `[CLS] $A [SEP]`."""
    tokenizer = Tokenizer(models.WordPiece())
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    _bpe_vocabulary(tokenizer, 400, specials)
    learnt = [piece for piece, _ in sorted(tokenizer.get_vocab().items(), key=lambda i: i[1])]
    pieces = learnt + ["##" + piece for piece in learnt[len(specials) :]]
    vocab = {piece: index for index, piece in enumerate(pieces)}
    tokenizer.model = models.WordPiece(vocab, unk_token="[UNK]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer.decoder = decoders.WordPiece()
    return _spec(tokenizer)


def unigram() -> dict[str, Any]:
    """T5-like: NFKC, Metaspace, Unigram (pieces learnt by BPE, scored by their rank),
    `$A </s>`."""
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    _bpe_vocabulary(tokenizer, 500, ["<pad>", "</s>", "<unk>"])
    ranked = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    pieces = [(piece, -math.log(rank + 2)) for rank, (piece, _) in enumerate(ranked)]
    tokenizer.model = models.Unigram(pieces, unk_id=2, byte_fallback=False)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", 1)]
    )
    return _spec(tokenizer)


def word_level() -> dict[str, Any]:
    """Whole words split on whitespace and punctuation, with chat markers added."""
    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = tr.WordLevelTrainer(special_tokens=["<unk>", "<pad>"], show_progress=False)
    tokenizer.train_from_iterator(corpus_lines(), trainer)
    tokenizer.add_special_tokens(CHAT_MARKERS)
    return _spec(tokenizer)


@cache
def tokenizer_seeds() -> dict[str, str]:
    """Seed name -> `tokenizer.json` text (built once per process)."""
    built = {
        "gpt2-bpe": byte_level_bpe(llama3=False),
        "llama3-bpe": byte_level_bpe(llama3=True),
        "llama2-spm-bpe": sentencepiece_bpe(),
        "bert-wordpiece": wordpiece(),
        "t5-unigram": unigram(),
        "word-level": word_level(),
    }
    return {name: json.dumps(spec, ensure_ascii=False) for name, spec in built.items()}


# --------------------------------------------------------------------------- config files

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
INST = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% else %}"
    "{{ ' ' + message['content'] + eos_token }}{% endif %}{% endfor %}"
)
TOOLS = "{% if tools %}{{ '<tools>' + tools | tojson + '</tools>\\n' }}{% endif %}" + CHATML


def added_token(content: str, special: bool = True) -> dict[str, Any]:
    """An AddedToken object as transformers writes it into a config."""
    return {
        "__type": "AddedToken", "content": content, "lstrip": False, "normalized": False,
        "rstrip": False, "single_word": False, "special": special,
    }  # fmt: skip


def config_seeds() -> dict[str, dict[str, Any]]:
    """Seed name -> `tokenizer_config.json` value."""
    decoder = {str(i): added_token(t) for i, t in enumerate(["<unk>", "<s>", "</s>"])}
    return {
        "chatml-config": {
            "chat_template": CHATML, "bos_token": None, "eos_token": "<|im_end|>",
            "pad_token": "<|endoftext|>", "unk_token": None, "add_bos_token": False,
            "model_max_length": 131072, "tokenizer_class": "PreTrainedTokenizerFast",
            "added_tokens_decoder": {"0": added_token("<|im_start|>")},
        },
        "llama2-config": {
            "chat_template": [
                {"name": "default", "template": INST}, {"name": "tool_use", "template": TOOLS},
            ],
            "bos_token": added_token("<s>"), "eos_token": added_token("</s>"),
            "unk_token": added_token("<unk>"), "add_bos_token": True, "add_eos_token": False,
            "legacy": False, "model_max_length": 1000000000000000019884624838656,
            "added_tokens_decoder": decoder, "clean_up_tokenization_spaces": False,
        },
        "bert-config": {
            "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]",
            "pad_token": "[PAD]", "unk_token": "[UNK]", "do_lower_case": True,
            "model_max_length": 512, "tokenizer_class": "BertTokenizer",
        },
    }  # fmt: skip


def template_file_seeds() -> dict[str, dict[str, Any] | str]:
    """Template files: `chat_template.jinja`, a named one, the legacy `chat_template.json`."""
    return {
        "chat_template.jinja": CHATML,
        "tool_use.jinja": TOOLS,
        "chat_template.json": {"chat_template": INST},
    }
