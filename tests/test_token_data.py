"""The output views' data: compact tokens, and tokens per message."""

from __future__ import annotations

from itertools import pairwise

from app.analysis.spans import message_ends
from app.pipeline.token_data import ids_json, token_data, tokens_per_message
from app.render import engines
from app.render.core import RenderRequest
from app.render.limits import RenderLimits
from app.tokens.vocab import Token

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: Drops the reasoning of every answer but the last, as Qwen3 and DeepSeek-R1 do.
DROPS_REASONING = (
    "{% for m in messages %}[{{ m.role }}]"
    "{% if m.reasoning_content and loop.last %}<think>{{ m.reasoning_content }}</think>{% endif %}"
    "{{ m.content }}\n{% endfor %}"
)
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!", "reasoning_content": "greet back"},
    {"role": "user", "content": "Bye"},
]


def test_token_data_rebuilds_the_text() -> None:
    text = "hi  there é"
    tokens = [
        Token(1, " hi", 0, 2, False),
        Token(2, "there", 4, 9, False),
        Token(3, "<0xC3>", 10, 11, False),
        Token(4, "<0xA9>", 10, 11, False),
        Token(5, "</s>", 11, 11, True),
    ]
    data = token_data(text, tokens)
    assert data == {
        "lens": [2, 5, 1, 0, 0],
        "gaps": [[1, 2], [2, 1]],
        "special": [4],
        "pieces": {0: " hi", 2: "<0xC3>", 3: "<0xA9>", 4: "</s>"},
    }
    assert ids_json(tokens) == "[1, 2, 3, 4, 5]"


def test_tokens_per_message_add_up() -> None:
    tokens = [Token(k, "x", k, k + 1, False) for k in range(10)]
    messages = [{"role": "user"}, {"role": "assistant"}, {"role": "user"}]
    rows = tokens_per_message(tokens, [3, None, 8], messages, 10)
    assert rows == [
        {"messages": "1", "role": "user", "chars": 3, "tokens": 3},
        {"messages": "2–3", "role": "user", "chars": 5, "tokens": 5},
        {"messages": "after", "role": "", "chars": 2, "tokens": 2},
    ]


def parts(template: str) -> tuple[str, list[str]]:
    """The prompt, and each message's part of it."""
    request = RenderRequest(template=template, messages=MESSAGES, add_generation_prompt=True)
    limits = RenderLimits()
    prompt = engines.render(request, limits).prompt
    ends = message_ends(request, prompt, limits)
    assert ends == sorted(ends)
    return prompt, [prompt[a:b] for a, b in pairwise([0, *ends])]


def test_message_ends_split_the_prompt_at_each_message() -> None:
    prompt, split = parts(CHATML)
    assert split[1] == "<|im_start|>user\nHi<|im_end|>\n"
    assert all(m["content"] in part for m, part in zip(MESSAGES, split, strict=True))
    assert prompt[len("".join(split)) :] == "<|im_start|>assistant\n"


def test_a_turn_written_differently_when_last_ends_where_its_text_does() -> None:
    # Rendered last, the answer kept its reasoning; in the whole prompt it has none, so
    # the render's rest is found again after the point where the two differ: the
    # answer's text still counts with the answer, and the next message keeps its own.
    prompt, split = parts(DROPS_REASONING)
    assert "<think>" not in prompt
    assert split[2] == "[assistant]Hello!\n"
    assert split[3] == "[user]Bye\n"


def test_a_message_that_does_not_render_alone_counts_with_the_next() -> None:
    template = "{% if messages[-1].role == 'assistant' %}{{ raise_exception('no') }}{% endif %}"
    template += "{% for m in messages %}{{ m.content }};{% endfor %}"
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    messages.append({"role": "user", "content": "c"})
    request = RenderRequest(template=template, messages=messages)
    limits = RenderLimits()
    prompt = engines.render(request, limits).prompt
    assert message_ends(request, prompt, limits) == [2, None, 6]
