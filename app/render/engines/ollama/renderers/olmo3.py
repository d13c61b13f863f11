"""Ollama's `olmo3`, `olmo3.1`, `olmo3-think` and `olmo3-32b-think` renderers
(model/renderers/olmo3.go, olmo3_think.go at ollama/ollama fb30760).

olmo3: ChatML turns; the first system message (others dropped), or Ai2's default
(Olmo 3.1's longer one for `olmo3.1`) saying whether functions are offered, with the
tools as `<functions>[...]</functions>` (Go JSON with `, ` and `: `); an assistant's
calls as `<function_calls>name(k=v, ...)</function_calls>` (keys sorted, values as Go
JSON), one per line; tool results as an `environment` turn. A trailing assistant text
without calls is left open. The think variants drop tools and tool messages, add
" You do not currently have access to any functions. <functions></functions>" to a
given system message, and open the answer with `<think>`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.render.engines.ollama import gojson

DEFAULT = "You are a helpful function-calling AI assistant. "
DEFAULT_31 = (
    "You are Olmo, a helpful AI assistant built by Ai2. Your date cutoff is December 2024, "
    "and your model weights are available at https://huggingface.co/allenai. "
)
NO_FUNCTIONS = "You do not currently have access to any functions. "
WITH_FUNCTIONS = (
    "You are provided with function signatures within <functions></functions> XML tags. "
    "You may call one or more functions to assist with the user query. Output any "
    "function calls within <function_calls></function_calls> XML tags. Do not make "
    "assumptions about what values to plug into functions."
)
THINK_SUFFIX = " You do not currently have access to any functions. <functions></functions>"
THINK_32B = "You are a helpful AI assistant."


def _split(messages: list[dict[str, Any]], drop: tuple[str, ...]) -> tuple[Any, list]:
    """The first system message (or None) and the messages that are not system (nor
    of the roles in `drop`)."""
    system = next((m for m in messages if m.get("role") == "system"), None)
    rest = [m for m in messages if m.get("role") not in ("system", *drop)]
    return system, rest


def _functions(tools: list[dict[str, Any]]) -> str:
    """The tools as `<functions>` (marshalWithSpaces of the list)."""
    return (
        "<functions>"
        + gojson.spaced("[" + ",".join(map(gojson.tool, tools)) + "]")
        + "</functions>"
    )


def _calls(calls: list[dict[str, Any]]) -> str:
    """`<function_calls>` with one `name(k=v, ...)` per line."""
    lines = []
    for call in calls:
        function = call.get("function") or {}
        arguments = function.get("arguments") or {}
        pairs = ", ".join(f"{k}={gojson.marshal(arguments[k])}" for k in sorted(arguments))
        lines.append(f"{function.get('name', '')}({pairs})")
    return "<function_calls>" + "\n".join(lines) + "</function_calls>"


def _system(system: Any, tools: list[dict[str, Any]] | None, extended: bool) -> str:
    """The system turn: the given system message or the default, and the functions."""
    if system is not None:
        body = (system.get("content") or "") + (_functions(tools) if tools else "")
    elif tools:
        body = (DEFAULT_31 if extended else DEFAULT) + WITH_FUNCTIONS + _functions(tools)
    else:
        body = (DEFAULT_31 if extended else DEFAULT) + NO_FUNCTIONS + "<functions></functions>"
    return f"<|im_start|>system\n{body}<|im_end|>\n"


def make(extended: bool) -> Callable[..., str]:
    """The olmo3 renderer (`extended`: olmo3.1's default system message)."""

    def render(messages: list[dict[str, Any]], tools: Any, think: Any = None) -> str:
        """The prompt Ollama's olmo3 renderer makes (`think` is not read)."""
        system, rest = _split(messages or [], ())
        out = [_system(system, tools, extended)]
        for i, message in enumerate(rest):
            role, content = message.get("role"), message.get("content") or ""
            if role == "user":
                out.append(f"<|im_start|>user\n{content}<|im_end|>\n")
            elif role == "tool":
                out.append(f"<|im_start|>environment\n{content}<|im_end|>\n")
            elif role == "assistant":
                calls = message.get("tool_calls") or []
                out.append("<|im_start|>assistant\n" + content + (_calls(calls) if calls else ""))
                if i < len(rest) - 1 or calls:
                    out.append("<|im_end|>\n")
        last = rest[-1] if rest else {}
        open_text = last.get("role") == "assistant" and not last.get("tool_calls")
        if not (open_text and last.get("content")):
            out.append("<|im_start|>assistant\n")
        return "".join(out)

    return render


def make_think(is_32b: bool) -> Callable[..., str]:
    """The olmo3-think renderer (`is_32b`: olmo3-32b-think's default system message)."""

    def render(messages: list[dict[str, Any]], tools: Any = None, think: Any = None) -> str:
        """The prompt Ollama's olmo3 think renderer makes (tools are not read)."""
        system, rest = _split(messages or [], ("tool",))
        if system is not None:
            head = (system.get("content") or "") + THINK_SUFFIX
        else:
            head = THINK_32B if is_32b else DEFAULT_31.rstrip(" ")
        out = [f"<|im_start|>system\n{head}<|im_end|>\n"]
        for message in rest:
            if message.get("role") in ("user", "assistant"):
                role, content = message["role"], message.get("content") or ""
                out.append(f"<|im_start|>{role}\n{content}<|im_end|>\n")
        return "".join(out) + "<|im_start|>assistant\n<think>"

    return render
