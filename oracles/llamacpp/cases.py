"""The requests and completions the llama.cpp answer recorder puts to the real library.

For every shared template: the Completion menu's entries (`tests/support/answers/
completions.json`), malformed variants made from them (broken JSON, a missing closing
tag, reasoning without its end tag, a cut-off answer, plain text, nothing), each read
with and without tools, and a subset under other server options (`--reasoning-format`
none / deepseek, thinking off, `parse_tool_calls` false, `parallel_tool_calls` false).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

#: The end-of-reasoning markers the menu's reasoning completions use; cutting a reasoning
#: completion at the first one leaves reasoning that never ends.
REASONING_ENDS = (
    "</think>",
    "</thinking>",
    "<|end|>",
    "[/THINK]",
    "<|END_THINKING|>",
    "<channel|>",
    "</seed:think>",
    "<|/think|>",
)
#: The clock of the menu's request (tests/support/answers `PINNED`), read as UTC.
PINNED = datetime(2026, 1, 15, 9, 30, tzinfo=UTC)
PLAIN = "Paris is the capital of France, and no tool is needed for that."
JSON_ONLY = '{"city": "Paris"}'


@dataclass(frozen=True)
class Request:
    """One request's settings (the template, its tools, the server's parser options)."""

    key: str
    tools: bool
    reasoning_format: str = "auto"
    #: None: as llama-server decides by default (on where the template supports it).
    enable_thinking: bool | None = None
    parse_tool_calls: bool = True
    #: None: what the template's capabilities say, as llama-server defaults it.
    parallel_tool_calls: bool | None = None
    #: The completion kinds read under this request (None: every kind there is).
    kinds: tuple[str, ...] | None = None
    #: Whether the template gets the menu's bos/eos tokens (else ""): the autoparser's
    #: analysis of a template can change with them.
    special_tokens: bool = True


#: The requests made for every template, in order.
REQUESTS = (
    Request("tools", tools=True),
    Request("no_tools", tools=False),
    Request(
        "tools_reasoning_none",
        tools=True,
        reasoning_format="none",
        kinds=("answer", "reasoning", "tool_call", "reasoning_unclosed"),
    ),
    Request(
        "tools_reasoning_deepseek",
        tools=True,
        reasoning_format="deepseek",
        kinds=("answer", "reasoning", "tool_call", "reasoning_unclosed"),
    ),
    Request(
        "tools_thinking_off",
        tools=True,
        enable_thinking=False,
        kinds=("answer", "reasoning", "tool_call"),
    ),
    Request(
        "tools_parse_tool_calls_false",
        tools=True,
        parse_tool_calls=False,
        kinds=("tool_call",),
    ),
    Request(
        "no_tools_parse_tool_calls_false",
        tools=False,
        parse_tool_calls=False,
        kinds=("tool_call", "answer"),
    ),
    Request(
        "tools_no_special_tokens",
        tools=True,
        special_tokens=False,
        kinds=("answer", "reasoning", "tool_call", "parallel_tool_calls"),
    ),
    Request(
        "tools_parallel_false",
        tools=True,
        parallel_tool_calls=False,
        kinds=("tool_call", "parallel_tool_calls"),
    ),
)


@dataclass
class TemplateCompletions:
    """The completions to read for one template, by kind (first text of a kind wins)."""

    kinds: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, text: str | None) -> None:
        if text is not None and kind not in self.kinds:
            self.kinds[kind] = text


def _cut_last_tag(text: str) -> str | None:
    """`text` without its final closing tag (`</tool_call>`, `<|tools_suffix|>`...)."""
    start = text.rstrip().rfind("<")
    if start <= 0 or not text.rstrip().endswith(">"):
        return None
    return text[:start]


def _break_json(text: str) -> str | None:
    """`text` with the first JSON string value of a tool call left unterminated."""
    for quoted in ('"Paris"', "'Paris'"):
        if quoted in text:
            return text.replace(quoted, quoted[:-1], 1)
    return None


def _unclosed_reasoning(text: str) -> str | None:
    """The reasoning completion cut where its reasoning ends (the end tag and after)."""
    found = [i for i in (text.find(end) for end in REASONING_ENDS) if i > 0]
    return text[: min(found)] if found else None


def completions_for(menu: dict[str, str]) -> TemplateCompletions:
    """The menu's completions for one template and the variants made from them."""
    made = TemplateCompletions()
    for kind in ("answer", "reasoning", "tool_call", "parallel_tool_calls"):
        made.add(kind, menu.get(kind))
    call = menu.get("tool_call")
    if call:
        made.add("tool_call_broken_json", _break_json(call))
        made.add("tool_call_unclosed", _cut_last_tag(call))
        made.add("tool_call_cut_half", call[: len(call) // 2])
    if menu.get("reasoning"):
        made.add("reasoning_unclosed", _unclosed_reasoning(menu["reasoning"]))
    made.add("plain", PLAIN)
    made.add("json_only", JSON_ONLY)
    made.add("empty", "")
    return made


def harness_requests(
    name: str,
    source: str,
    made: TemplateCompletions,
    question: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    special_tokens: dict[str, str],
) -> Iterator[tuple[Request, list[tuple[str, str]], dict[str, Any]]]:
    """Each request for one template: its settings, its (kind, completion) pairs with
    duplicate texts dropped, and the JSON line the harness reads."""
    for request in REQUESTS:
        seen: set[str] = set()
        pairs = []
        for kind, text in made.kinds.items():
            if (request.kinds is None or kind in request.kinds) and text not in seen:
                seen.add(text)
                pairs.append((kind, text))
        if not pairs:
            continue
        line = {
            "id": f"{name}|{request.key}",
            "template": source,
            "bos_token": special_tokens.get("bos_token", "") if request.special_tokens else "",
            "eos_token": special_tokens.get("eos_token", "") if request.special_tokens else "",
            "messages": question,
            "tools": tools if request.tools else None,
            "add_generation_prompt": True,
            "enable_thinking": request.enable_thinking,
            "reasoning_format": request.reasoning_format,
            "parse_tool_calls": request.parse_tool_calls,
            "parallel_tool_calls": request.parallel_tool_calls,
            "now": int(PINNED.timestamp()),
            "completions": [text for _, text in pairs],
        }
        yield request, pairs, line
