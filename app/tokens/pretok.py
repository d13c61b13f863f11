"""llama.cpp's pre-tokenizer for each `tokenizer.ggml.pre` value, as Oniguruma regexes.

llama.cpp splits text with a list of regexes applied one after the other: every regex splits each
piece left by the previous one, and text a regex does not match stays as pieces of its own. That
is exactly a `tokenizers` `Sequence` of `Split(..., "isolated")`, so each entry below is the list
llama.cpp uses (src/llama-vocab.cpp, `llm_tokenizer_bpe`), rewritten only where llama.cpp's regex
engine and Oniguruma (used by `tokenizers`) disagree:

- `$` is end of input for std::regex but end of line for Oniguruma, hence `\\z`;
- llama.cpp replaces non-ASCII whitespace by U+000B before running a regex that has non-ASCII
  literals, so those whitespace code points never match such a literal range; the ranges that
  contain some are intersected with `[^\\s]` to say the same.
"""

from __future__ import annotations

from dataclasses import dataclass

# llama.cpp's GPT-2 regex (run by its hand-written `unicode_regex_split_custom_gpt2`, which also
# matches leftover whitespace, hence the final `|\s+`).
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

# Llama 3's regex with the case-insensitive contractions spelled out, as llama.cpp writes it.
_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
LLAMA3 = (
    _CONTRACTIONS
    + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Qwen2's: Llama 3's with single digits.
QWEN2 = (
    _CONTRACTIONS
    + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Qwen3.5's: Qwen2's with combining marks kept on letters.
QWEN35 = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# GPT-4o's (also Llama 4's): upper-then-lower letter runs, written with lookaheads by llama.cpp.
GPT4O = (
    r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+" + _CONTRACTIONS + "?"
    r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*" + _CONTRACTIONS + "?"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Mistral's Tekken: GPT-4o's without contractions and with single digits.
TEKKEN = (
    r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+"
    r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# CJK ideographs, the (oddly wide) U+0800..U+4E00 range and Hangul, as DeepSeek wrote them; the
# middle range holds whitespace that llama.cpp never lets it match.
_DEEPSEEK_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff&&[^\\s]]+"
# DeepSeek LLM's cased letters (a fixed list of Lu/Ll/Lt ranges).
_DEEPSEEK_LETTERS = (
    "[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293"
    "\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c"
    "\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5"
    "\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
    "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59"
    "\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc"
    "\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107"
    "\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee"
    "\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e"
    "\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a"
    "\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
    "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+"
)
# ASCII and full-width punctuation, curly quotes and U+3000..U+3002 (minus the ideographic space).
_DEEPSEEK_PUNCT = "[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002&&[^\\s]]+"
# Poro/BLOOM: anything up to whitespace or one of a few sentence marks.
_PORO = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"
_DEEPSEEK3_WORDS = (
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
    r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


@dataclass(frozen=True)
class PreTokenizer:
    """How llama.cpp pre-tokenizes one family of BPE vocabularies."""

    regexes: tuple[str, ...]
    #: Whole words found in the vocabulary skip the merges (llama.cpp `ignore_merges`).
    ignore_merges: bool = False
    #: llama.cpp's `add_bos` default for this pre-tokenizer (metadata can still override it).
    add_bos: bool = False
    #: llama.cpp forgets the default BOS id for this pre-tokenizer (ChatGLM).
    no_bos: bool = False


_DEFAULT = PreTokenizer((r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"))
_LLAMA3 = PreTokenizer((LLAMA3,), ignore_merges=True, add_bos=True)
_DEEPSEEK3 = PreTokenizer(
    (r"\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+", _DEEPSEEK3_WORDS)
)
_BAILING = (
    r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"
)
_SEED_CODER = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# Jais 2: Llama 3's regex with whitespace runs cut at powers of two.
_JAIS2 = (
    _CONTRACTIONS
    + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    + "".join(rf"|\s{{{n}}}(?!\S)" for n in (512, 256, 128, 64, 32, 16, 8, 4))
    + r"|\s{1,2}(?!\S)|\s{1}"
)
# EXAONE MoE: letters (with their marks) may run across single spaces.
_EXAONE_MOE = (
    _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"
)
_MINICPM5 = (
    _CONTRACTIONS
    + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_UFAKZEKA = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"

# `tokenizer.ggml.pre` values llama.cpp treats alike, with their pre-tokenizer.
_GROUPS: list[tuple[tuple[str, ...], PreTokenizer]] = [
    (("default",), _DEFAULT),
    (("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
      "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4", "mpt",
      "olmo", "jais", "trillion", "granite-docling"), PreTokenizer((GPT2,))),
    (("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
      "jina-v5-nano"), _LLAMA3),
    # Llama 3's regex without its ignore_merges/add_bos defaults.
    (("dbrx", "smaug-bpe"), PreTokenizer((LLAMA3,))),
    (("glm4", "chatglm-bpe"), PreTokenizer((LLAMA3,), no_bos=True)),
    (("deepseek-llm",), PreTokenizer(("[\r\n]", "\\s?" + _DEEPSEEK_LETTERS,
                                      "\\s?" + _DEEPSEEK_PUNCT, r"\s+\z", _DEEPSEEK_CJK,
                                      r"\p{N}+"))),
    (("deepseek-coder",), PreTokenizer(("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _DEEPSEEK_CJK,
                                        r"\p{N}"))),
    (("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"), _DEEPSEEK3),
    (("falcon",), PreTokenizer((r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"))),
    (("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b",
      "mellum2"), PreTokenizer((r"\p{N}", GPT2))),
    (("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "hunyuan", "solar-open",
      "megrez", "grok-2"), PreTokenizer((QWEN2,))),
    (("qwen35",), PreTokenizer((QWEN35,))),
    (("poro-chat", "bloom", "gpt3-finnish"), PreTokenizer((_PORO,))),
    (("viking",), PreTokenizer((_PORO, r"\p{N}"))),
    (("tekken",), PreTokenizer((TEKKEN,), ignore_merges=True, add_bos=True)),
    (("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"), PreTokenizer((GPT4O,))),
    (("seed-coder",), PreTokenizer((_SEED_CODER,))),
    (("bailingmoe", "bailingmoe2", "llada-moe"), PreTokenizer((_BAILING,))),
    (("ufakzeka",), PreTokenizer((_UFAKZEKA,))),
    (("jais-2",), PreTokenizer((_JAIS2,))),
    (("exaone-moe",), PreTokenizer((_EXAONE_MOE,))),
    (("minicpm5",), PreTokenizer((r"\p{N}{1,3}", _MINICPM5), ignore_merges=True)),
    (("laguna",), PreTokenizer(("[^\n]+|[\n]+", QWEN2))),
]  # fmt: skip

#: `tokenizer.ggml.pre` value -> pre-tokenizer.
PRE_TOKENIZERS: dict[str, PreTokenizer] = {name: pre for names, pre in _GROUPS for name in names}


def pre_tokenizer_for(pre: str) -> PreTokenizer | None:
    """The pre-tokenizer llama.cpp uses for `tokenizer.ggml.pre` == `pre`, or None if unknown.

    A missing/empty `pre` means llama.cpp's "default" (with a warning about degraded quality).
    """
    return PRE_TOKENIZERS.get(pre or "default")
