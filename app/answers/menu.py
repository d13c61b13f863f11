"""The Completion menu: what a model trained on this template emits after the prompt.

A template writes an assistant turn the way the model was trained to write it, so the
text a model generates for a plain answer, reasoning then an answer, one tool call or
two at once is what the template renders for that final assistant message: the prompt of
the conversation with that message, less the prompt that asks for it (with
`add_generation_prompt`), up to the end-of-turn marker (the stop token, which a runtime
never hands to its parser).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from app.analysis.examples import EXAMPLES
from app.errors import bounded_lines
from app.problems import TemplateProblem
from app.render.client import as_sent, with_text_arguments
from app.render.core import Rendered, RenderRequest
from app.render.engines import REFERENCE_ENGINE
from app.text import common_prefix_length

#: The menu's entries: id -> label, in the order the page lists them.
KINDS: dict[str, str] = {
    "answer": "A plain answer",
    "reasoning": "Reasoning, then an answer",
    "tool_call": "One tool call",
    "parallel_tool_calls": "Parallel tool calls",
}
_TOOL_KINDS = ("tool_call", "parallel_tool_calls")

#: The tools a tool-call entry offers when the conversation offers none (the page adds
#: them to its Tools, since a runtime reads tool calls only for a request with tools).
EXAMPLE_TOOLS: list[dict[str, Any]] = next(
    example["tools"] for example in EXAMPLES if example["name"] == "parallel-tools"
)

#: End-of-turn markers of the template families whose tokenizer may not name them as
#: EOS; the first of these (or the EOS token) after the message ends the completion.
END_MARKERS = (
    "<|im_end|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|tool_response>",
    "<end_of_turn>",
    "<turn|>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<｜end▁of▁sentence｜>",
    "<|end▁of▁sentence|>",
    "<|END_OF_TURN_TOKEN|>",
    "[/TOOL_CALLS]",
    "</s>",
    "[e~[",
    "<seed:eos>",
    "<|message_sep|>",
    "<end_of_sentence>",
    "<SPECIAL_12>",
    "</assistant>",
    "<｜hy_eos:opensource｜>",
    "<|user|>",
    "<|observation|>",
)

#: The stop tokens of Harmony turns (gpt-oss).
HARMONY_STOPS = ("<|return|>", "<|call|>")

_ANSWER = "The capital of France is Paris."
_REASONING = "The user asks for the capital of France. That is Paris."


@dataclass(frozen=True)
class MenuCompletion:
    """One entry filled in: the completion, and what the page should know about it."""

    kind: str
    completion: str
    #: The tools it calls, when the conversation offered none (the page adds them).
    tools: list[dict[str, Any]] | None = None
    #: Sentences on how it was taken (a history the template renders differently).
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # A note may quote the template's generation prompt, which a template makes as
        # long as it likes: cut here, as every sentence that leaves a task is.
        object.__setattr__(self, "notes", bounded_lines(self.notes, "A note."))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": KINDS[self.kind],
            "completion": self.completion,
            "tools": self.tools,
            "notes": list(self.notes),
        }


def example_value(schema: Any, name: str) -> Any:
    """A plausible value for a parameter of JSON schema `schema` called `name`."""
    if not isinstance(schema, dict):
        return "example"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        return [example_value(schema.get("items"), name)]
    if kind == "object":
        return arguments_for(schema)
    return "Paris" if name in ("city", "location", "place") else "example"


def arguments_for(parameters: Any) -> dict[str, Any]:
    """Example arguments for a tool's `parameters`: its required ones (all when none is
    required), in the schema's order."""
    if not isinstance(parameters, dict) or not isinstance(parameters.get("properties"), dict):
        return {}
    properties = parameters["properties"]
    required = parameters.get("required")
    names = [name for name in properties if not isinstance(required, list) or name in required]
    return {name: example_value(properties[name], name) for name in names or properties}


def _function(tool: Any) -> dict[str, Any]:
    function = tool.get("function") if isinstance(tool, dict) else None
    return function if isinstance(function, dict) else {}


def tool_calls_for(tools: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """`count` calls of the first tools (the first one again when there is only one)."""
    calls = []
    for index in range(count):
        function = _function(tools[index % len(tools)])
        arguments = arguments_for(function.get("parameters"))
        name = function.get("name") if isinstance(function.get("name"), str) else "tool"
        calls.append(
            {
                # Nine letters and digits: Mistral's templates refuse any other id.
                "id": f"call{index + 1:05d}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        )
    return calls


def reasoning_key(template: str) -> str:
    """The message field the template reads reasoning from (llama.cpp and vLLM set
    `reasoning_content`; some templates read `thinking` or `reasoning`)."""
    if "reasoning_content" in template:
        return "reasoning_content"
    if "thinking" in template and "reasoning" not in template:
        return "thinking"
    return "reasoning" if "reasoning" in template else "reasoning_content"


def final_message(kind: str, template: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message that entry `kind` stands for."""
    if kind == "answer":
        return {"role": "assistant", "content": _ANSWER}
    if kind == "reasoning":
        return {"role": "assistant", reasoning_key(template): _REASONING, "content": _ANSWER}
    count = 1 if kind == "tool_call" else 2
    return {"role": "assistant", "content": "", "tool_calls": tool_calls_for(tools, count)}


def end_of_turn(tail: str, special_tokens: dict[str, str]) -> int:
    """Where the model's turn ends in `tail`: at the first end-of-turn marker or EOS
    token, else after its last non-blank character (blanks before the marker are the
    template's separator, not the model's). In Harmony (gpt-oss) `<|end|>` ends
    one message of several in a turn; the turn ends at `<|return|>` or `<|call|>`."""
    markers = [marker for marker in HARMONY_STOPS if marker in tail]
    if not markers:
        markers = [token for token in (special_tokens.get("eos_token"),) if token]
        markers += END_MARKERS
    found = [index for marker in markers if (index := tail.find(marker)) >= 0]
    return len(tail[: min(found)].rstrip()) if found else len(tail.rstrip())


def completion_of(
    with_message: str, prompt: str, special_tokens: dict[str, str], reasoning: str = ""
) -> MenuCompletion:
    """The completion that turns `prompt` into `with_message`, up to the end of its turn
    (kind and tools are filled in by the caller); `reasoning` is the message's, for a
    prompt that opens a thinking block the history does not show."""
    notes: list[str] = []
    start, opened = len(prompt), ""
    if not with_message.startswith(prompt):
        # They part inside the generation prompt (an opened `<think>`, say): back to the
        # end of the last line or tag they share.
        common = with_message[: common_prefix_length(with_message, prompt)]
        start = max(common.rfind("\n"), common.rfind(">")) + 1
        opened = prompt[start:]
        notes.append(
            "The template writes the answer in the history without the generation prompt's "
            f"{opened!r}, so the completion is what follows it there."
        )
    tail = with_message[start:]
    completion = tail[: end_of_turn(tail, special_tokens)]
    if "<think>" in opened:
        # The model goes on from the opened block: its reasoning, then the closing tag.
        if "</think>" not in completion:
            completion = f"{reasoning}\n</think>\n\n{completion}"
        elif reasoning and reasoning not in completion:
            completion = completion.replace("</think>", f"{reasoning}</think>", 1)
    return MenuCompletion("answer", completion, notes=tuple(notes))


def menu_completion(
    request: RenderRequest, kind: str, render: Callable[[RenderRequest], Rendered]
) -> MenuCompletion:
    """Entry `kind` for the conversation of `request`, rendered by the reference engine
    with `render` (the sandbox pool's `render_exactly`: the conversation goes as the
    engine's callers send it, and the answer's arguments as this function writes them);
    raises `TemplateProblem` when the template refuses either render."""
    if kind not in KINDS:
        raise TemplateProblem("BadRequest", f"The completion menu has no entry {kind[:40]!r}.")
    added_tools = None
    tools = request.tools or []
    if kind in _TOOL_KINDS and not tools:
        tools = added_tools = json.loads(json.dumps(EXAMPLE_TOOLS))
    asking, _ = as_sent(
        replace(
            request,
            tools=tools or None,
            add_generation_prompt=True,
            continue_final_message=False,
            engine=REFERENCE_ENGINE,
        ),
    )
    answered = replace(
        asking,
        messages=[*request.messages, final_message(kind, request.template, tools)],
        add_generation_prompt=False,
    )
    prompt = render(asking).prompt
    try:
        with_message = render(answered).prompt
    except TemplateProblem:
        if kind not in _TOOL_KINDS:
            raise
        # Some templates (functionary's) join the arguments to text: they want JSON text.
        with_message = render(_with_text_arguments(answered)).prompt
    reasoning = _REASONING if kind == "reasoning" else ""
    entry = completion_of(with_message, prompt, request.special_tokens, reasoning)
    return replace(entry, kind=kind, tools=added_tools)


def _with_text_arguments(request: RenderRequest) -> RenderRequest:
    # Only the answer: the conversation before it stays as the engine's callers send it.
    *before, answer = request.messages
    return replace(request, messages=[*before, with_text_arguments(answer)])
