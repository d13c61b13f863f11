"""app.pipeline.prompt: the marks of a prompt (specials, markers), and token spans."""

from __future__ import annotations

import json
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

from app.pipeline.origin import still_from
from app.pipeline.prompt import prompt_marks
from app.pipeline.token_data import token_data
from app.pipeline.tokens_view import id_blocks
from app.text import template_markers
from app.tokens.vocab import Token, VocabTokenizer, tokenize
from tests.support import REPO


def marks(prompt: str, *args: object) -> list[tuple[str, str]]:
    """(kind, text) of each mark `prompt_marks` finds, after checking what every answer
    keeps: marks in order, not overlapping, each a special token given or a marker."""
    found = prompt_marks(prompt, *args)
    specials = {s for s in (args[0] if args else ()) if isinstance(s, str) and s}
    end = 0
    for start, stop, kind in found:
        assert end <= start < stop <= len(prompt), found
        end = stop
        assert kind == "marker" or (kind == "special" and prompt[start:stop] in specials)
    return [(kind, prompt[start:stop]) for start, stop, kind in found]


def markers(prompt: str, *args: object) -> list[str]:
    return [text for kind, text in marks(prompt, *args) if kind == "marker"]


CHATML = (
    "<|im_start|>system\nBe brief.<|im_end|>\n"
    "<|im_start|>user\nHi\tthere  !<|im_end|>\n"
    "<|im_start|>assistant\n"
)


def test_chatml_exact_marks() -> None:
    assert prompt_marks(CHATML) == [
        (0, 12, "marker"),
        (28, 38, "marker"),
        (39, 51, "marker"),
        (67, 77, "marker"),
        (78, 90, "marker"),
    ]
    assert CHATML[28:38] == CHATML[67:77] == "<|im_end|>"


def test_chatml_with_the_eos_special() -> None:
    found = marks(CHATML, ["<|im_end|>"])
    assert [kind for kind, text in found if text == "<|im_end|>"] == ["special", "special"]
    assert [kind for kind, text in found if text == "<|im_start|>"] == ["marker"] * 3


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        (  # Llama 3
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n",
            ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
             "<|start_header_id|>", "<|end_header_id|>"],
        ),
        (  # Mistral with tools
            "<s>[SYSTEM_PROMPT]Be nice.[/SYSTEM_PROMPT][AVAILABLE_TOOLS][{}][/AVAILABLE_TOOLS]"
            "[INST]Hi[/INST][TOOL_CALLS][{\"name\": \"f\"}]</s>",
            ["<s>", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]",
             "[/AVAILABLE_TOOLS]", "[INST]", "[/INST]", "[TOOL_CALLS]", "</s>"],
        ),
        (  # Llama 2
            "<s>[INST] <<SYS>>\nsys\n<</SYS>>\n\nHi [/INST]",
            ["<s>", "[INST]", "<<SYS>>", "<</SYS>>", "[/INST]"],
        ),
        (  # DeepSeek R1: full-width bars, "▁" in names
            "<｜begin▁of▁sentence｜>Be nice.<｜User｜>Hi<｜Assistant｜>"
            "<think>\nhm\n</think>\n\nHello<｜end▁of▁sentence｜>",
            ["<｜begin▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<think>", "</think>",
             "<｜end▁of▁sentence｜>"],
        ),
        (  # Gemma
            "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
            ["<bos>", "<start_of_turn>", "<end_of_turn>", "<start_of_turn>"],
        ),
        (  # Qwen / Hermes tool calls
            "<tools>\n[]\n</tools><tool_call>\n{\"name\": \"f\"}\n</tool_call>",
            ["<tools>", "</tools>", "<tool_call>", "</tool_call>"],
        ),
        (  # gpt-oss
            "<|start|>assistant<|channel|>analysis<|message|>Think.<|end|>",
            ["<|start|>", "<|channel|>", "<|message|>", "<|end|>"],
        ),
    ],
)  # fmt: skip
def test_markers_of_real_templates(prompt: str, expected: list[str]) -> None:
    assert markers(prompt) == expected


def test_content_that_only_looks_like_markup_is_text() -> None:
    prompt = (
        'Use <b>bold</b> <div class="x"> <br/> <my-tag> a < b > c, x<|y |> z <| |>, see [1], '
        "[link](http://x), [NOTE], [A], [Inst], <<not sys>>, <thinking> and {{ '<|x' }}"
    )
    assert marks(prompt) == []


def test_specials_win_over_markers() -> None:
    prompt = "<s>[INST] hi [/INST]</s>\n\n\n<|im_start|>user"
    specials = ["<s>", "</s>", "\n\n", "<|im_start|>user"]
    assert marks(prompt, specials) == [
        ("special", "<s>"),
        ("marker", "[INST]"),
        ("marker", "[/INST]"),
        ("special", "</s>"),
        ("special", "\n\n"),  # the third newline is text
        ("special", "<|im_start|>user"),  # longer than the marker it starts with
    ]


def test_longest_special_first_and_junk_ignored() -> None:
    found = marks("<|im_end|>\nx", ["<|im_end|>", "<|im_end|>\n", "", None, 7])
    assert found == [("special", "<|im_end|>\n")]


GLM_TEMPLATE = (
    "[gMASK]<sop>{% for m in messages %}{{ '<|' + m['role'] + '|>' }}\n{{ m['content'] }}"
    "{% endfor %}{# <|comment|> #}{% if a<b and c>d %}{% endif %}"
    '{{ "<|assistant|>" if add_generation_prompt }}'
)


def test_template_markers_come_from_literal_text_and_strings() -> None:
    # `a<b and c>d` is code and the comment is not output: neither gives a marker.
    assert template_markers(GLM_TEMPLATE) == ["<sop>", "<|assistant|>", "[gMASK]"]
    assert template_markers("{% if x %}[optional] <b>{{ 'Note: [TODO]' }}{% endif %}") == [
        "<b>",
        "[TODO]",
    ]


def test_template_markers_are_shown() -> None:
    prompt = "[gMASK]<sop><|user|>\nHi<|assistant|>"
    assert markers(prompt) == ["<|user|>", "<|assistant|>"]
    assert markers(prompt, (), GLM_TEMPLATE) == ["[gMASK]", "<sop>", "<|user|>", "<|assistant|>"]
    # A special token that is also a template marker stays special.
    assert ("special", "<sop>") in marks(prompt, ["<sop>"], GLM_TEMPLATE)


PIECES = ["<|im_start|>", "<|", "|>", "<", ">", "[INST]", "[", "]", "/", "<｜User｜>", "｜",
          "<<SYS>>", "<s>", "</s>", "_", "\n", "\r\n", "\t", " ", "  ", "😀", "é", "a",
          "b c"]  # fmt: skip
SPECIALS = ["<s>", "</s>", "<|im_end|>", "\n\n", "[INST]", "😀", "<|", "a"]


@settings(max_examples=300, deadline=None)
@given(
    prompt=st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=30).map("".join),
    specials=st.lists(st.sampled_from(SPECIALS), max_size=3),
    template=st.sampled_from([None, GLM_TEMPLATE, "{{ '<|im_start|>' }}[X_Y]<a>"]),
)
def test_marks_of_any_prompt(prompt: str, specials: list[str], template: str) -> None:
    for kind, text in marks(prompt, specials, template):
        if kind == "marker":  # a marker is a marker on its own too
            assert marks(text, (), template) == [("marker", text)]
        else:  # and a special token is marked wherever it stands
            assert marks(f"x{text}x", [text]) == [("special", text)]


def test_a_long_prompt_in_one_pass() -> None:
    turn = "<|im_start|>user\nSome words, then\ta\ttab and 😀 emoji.<|im_end|>\n"
    kinds = [kind for _, _, kind in prompt_marks(turn * 20_000, ["<|im_end|>"])]  # ~1.2 MB
    assert kinds.count("special") == kinds.count("marker") == 20_000 == len(kinds) / 2


# Token spans. The first three cases are what llama-spm, gpt-2 and bert-bge vocabularies give.


def test_byte_tokens_share_one_character() -> None:
    text = "Hi 😀 é"
    tokens = [
        Token(1, "<s>", 0, 0, True),
        Token(6324, " Hi", 0, 2, False),
        Token(29871, " ", 2, 3, False),
        Token(243, "<0xF0>", 3, 4, False),
        Token(162, "<0x9F>", 3, 4, False),
        Token(155, "<0x98>", 3, 4, False),
        Token(131, "<0x80>", 3, 4, False),
        Token(904, " é", 4, 6, False),
        Token(2, "</s>", 6, 6, True),
    ]
    assert covered(text, tokens) == ["", "Hi", " ", "😀", "", "", "", " é", ""]
    data = token_data(text, tokens)
    assert data["special"] == [0, 8]
    # Pieces are sent only where they differ from the text drawn.
    assert data["pieces"] == {0: "<s>", 1: " Hi", 3: "<0xF0>", 4: "<0x9F>", 5: "<0x98>",
                              6: "<0x80>", 8: "</s>"}  # fmt: skip


def test_overlapping_offsets_show_each_character_once() -> None:
    tokens = [Token(30325, " <0xF0><0x9F><0x98>", 0, 2, False), Token(222, "<0x80>", 1, 2, False)]
    assert covered(" 😀", tokens) == [" 😀", ""]
    # A span reaching past the previous one gets only the part not shown yet.
    tokens = [Token(1, "ab", 0, 2, False), Token(2, "bc", 1, 3, False)]
    assert covered("abc", tokens) == ["ab", "c"]


def test_text_no_token_covers_gets_its_own_span() -> None:
    text = "hi  there "
    tokens = [Token(7632, " hi", 0, 2, False), Token(2045, " there", 4, 9, False)]
    assert covered(text, tokens) == ["hi", "~  ~", "there", "~ ~"]


def covered(text: str, tokens: list[Token]) -> list[str]:
    """What the page draws for `tokens` over `text`, from `token_data`: the text each token
    covers, with "~text~" for text no token covers."""
    data = token_data(text, tokens)
    gaps = dict(map(tuple, data["gaps"]))
    out, pos = [], 0
    for index, length in enumerate([*data["lens"], 0]):
        if index in gaps:
            out.append(f"~{text[pos : pos + gaps[index]]}~")
            pos += gaps[index]
        if index < len(data["lens"]):
            out.append(text[pos : pos + length])
            pos += length
    assert pos == len(text)
    return out


@cache
def byte_fallback_tokenizer() -> VocabTokenizer:
    """A tiny SentencePiece-like BPE with byte fallback, through the real `tokenize`."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2} | {f"<0x{b:02X}>": 3 + b for b in range(256)}
    merges = [("▁", "H"), ("▁H", "i"), ("▁", "t"), ("▁t", "o"), ("▁", "é")]
    for a, b in merges:
        for piece in (a, b, a + b):
            vocab.setdefault(piece, len(vocab))
    tok = Tokenizer(models.BPE(vocab, merges, byte_fallback=True, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.ByteFallback()
    tok.add_special_tokens([AddedToken("<s>", special=True), AddedToken("</s>", special=True)])
    return VocabTokenizer.from_tokenizer_json(tok.to_str())


def test_real_tokens_of_an_emoji() -> None:
    text = "<s>Hi 😀 to é𝄞</s>"
    tokens = tokenize(byte_fallback_tokenizer(), text)
    drawn = covered(text, tokens)
    assert "".join(drawn) == text
    emoji = [k for k, t in enumerate(tokens) if t.piece in ("<0xF0>", "<0x9F>", "<0x98>", "<0x80>")]
    assert [drawn[k] for k in emoji[:4]] == ["😀", "", "", ""]
    assert [drawn[k] for k in token_data(text, tokens)["special"]] == ["<s>", "</s>"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("Hito é😀𝄞\n\t<s>/"), max_size=40) | st.text(max_size=20))
def test_token_data_rebuilds_the_text(text: str) -> None:
    tokens = tokenize(byte_fallback_tokenizer(), text)
    drawn = covered(text, tokens)
    assert "".join(drawn).replace("~", "") == text.replace("~", "")
    data = token_data(text, tokens)
    assert len(data["lens"]) == len(tokens)
    assert data["special"] == [k for k, t in enumerate(tokens) if t.special]


@pytest.mark.parametrize("count", [0, 1, 7, 2_000])
def test_the_id_list_is_cut_between_ids_into_pieces_that_join_back(count: int) -> None:
    ids = json.dumps(list(range(10_000, 10_000 + count)), separators=(", ", ":"))
    pieces = id_blocks(ids, size=100)
    assert "".join(pieces) == ids
    assert all(piece.endswith(", ") for piece in pieces[:-1])
    assert all(len(piece) <= 100 + 8 for piece in pieces[:-1])  # one id past the size at most


def test_a_template_is_still_the_library_ones_only_while_it_keeps_its_telling_lines():
    chatml = (REPO / "templates_lib" / "chatml.jinja").read_text(encoding="utf-8")
    assert still_from(chatml, chatml)
    assert still_from(chatml, chatml.replace("assistant", "model") + "{# mine #}\n")
    # Another template that shares only ChatML's `{%- endif %}`-like lines and one more.
    other = (REPO / "docs" / "tool_calling.jinja").read_text(encoding="utf-8")
    assert not still_from(chatml, other)
    assert not still_from(chatml, "{{ messages[0].content }}")
