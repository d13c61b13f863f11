"""The request's options as vLLM passes them to `apply_chat_template`.

vLLM's request model (vllm/entrypoints/openai/chat_completion/protocol.py) and renderer
(vllm/renderers/hf.py, params.py):

- `continue_final_message` is a boolean, and with `add_generation_prompt` it is a 400;
- `chat_template_kwargs` (the playground's `kwargs`) are merged under the request's own
  fields: `add_generation_prompt` and `continue_final_message` always win, `documents`
  wins unless it is null; `chat_template` and `tokenize` are refused;
  the other arguments of transformers' `apply_chat_template` (`padding`, `return_dict`,
  ...) are taken as its arguments, never template variables; and a kwarg the template
  never reads is not passed;
- each tool is validated into vLLM's tool model and dumped back: `type`, `function` as
  `name`, `description` and `parameters` (null when absent), `strict` and
  `defer_loading` when set, and a tool's own `defer_loading` when set (it also becomes
  the function's when that has none); every other key is dropped, and the parameters
  keep their keys in the order sent. A `tools` kwarg replaces them as given.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import meta

from app.render.core import RenderRequest
from app.render.engines.vllm.contract import Refused
from app.render.environment import shared_environment

#: Kwargs vLLM refuses: the template and tokenization are the server's to choose.
REFUSED_KWARGS = ("chat_template", "tokenize")

#: Arguments of transformers' `apply_chat_template` that a kwarg binds to, never reaching
#: the template as a variable (those the request sets are merged by `_merged_fields`).
APPLY_ARGUMENTS = frozenset(
    {
        "padding", "truncation", "max_length", "return_tensors", "return_dict",
        "return_assistant_tokens_mask", "tokenizer_kwargs",
    }
)  # fmt: skip


def check_flags(request: RenderRequest) -> None:
    """The 400s of vLLM's request model for the generation flags."""
    if not isinstance(request.continue_final_message, bool):
        raise Refused(
            "continue_final_message: Input should be a valid boolean "
            "(vLLM continues the final message's content only)."
        )
    if request.continue_final_message and request.add_generation_prompt:
        raise Refused(
            "Cannot set both `continue_final_message` and `add_generation_prompt` to True."
        )


def merged_options(request: RenderRequest, rewrites: list[str]) -> tuple[dict[str, Any], Any, Any]:
    """The kwargs the template gets, and the documents and tools vLLM passes."""
    kwargs = dict(request.kwargs)
    refused = sorted(set(REFUSED_KWARGS) & kwargs.keys())
    if refused:
        raise Refused(f"Found unexpected chat template kwargs from request: {set(refused)}")
    if "conversation" in kwargs:
        raise Refused("apply_chat_template() got multiple values for argument 'conversation'")
    documents, tools = request.documents, request.tools
    for name in ("add_generation_prompt", "continue_final_message"):
        if name in kwargs:
            kwargs.pop(name)
            rewrites.append(f"the kwarg {name} is overridden by the request's own field")
    if documents is None and kwargs.get("documents") is not None:
        documents = kwargs["documents"]
        rewrites.append("the kwarg documents is passed as the documents")
    # The request's tools are the defaults the kwargs are merged over.
    tools = dumped_tools(tools, rewrites)
    if kwargs.get("tools") is not None:
        tools = kwargs["tools"]
        rewrites.append("the kwarg tools replaces the request's tools")
    kwargs.pop("documents", None)
    kwargs.pop("tools", None)
    read = template_variables(request.template)
    unread = sorted(name for name in kwargs if name in APPLY_ARGUMENTS or name not in read)
    for name in unread:
        del kwargs[name]
    if unread:
        rewrites.append(f"kwargs the template never reads are not passed: {', '.join(unread)}")
    return kwargs, documents, tools


@lru_cache(maxsize=64)
def template_variables(template: str) -> frozenset[str]:
    """The variables the template reads from its context (cached: parsing is slow)."""
    return frozenset(meta.find_undeclared_variables(shared_environment().parse(template)))


def dumped_tools(tools: Any, rewrites: list[str]) -> list[dict[str, Any]] | None:
    """The tools as vLLM's pydantic model dumps them."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise Refused("tools must be a list.")
    dumped = [_dumped_tool(tool, f"tools[{index}]") for index, tool in enumerate(tools)]
    if [list(_walk(t)) for t in dumped] != [list(_walk(t)) for t in tools]:
        rewrites.append(
            "tools are rewritten as vLLM's tool model dumps them (description and parameters "
            "null when absent, other keys dropped)"
        )
    return dumped


def _dumped_tool(tool: Any, where: str) -> dict[str, Any]:
    if not isinstance(tool, dict) or not isinstance(tool.get("function"), dict):
        raise Refused(f"{where}.function: Field required (an object with the function's name).")
    if tool.get("type", "function") != "function":
        raise Refused(f"{where}.type: Input should be 'function'.")
    function = tool["function"]
    if not isinstance(function.get("name"), str):
        raise Refused(f"{where}.function.name: Field required (a string).")
    dumped_function = {
        "name": function["name"],
        "description": function.get("description"),
        "parameters": function.get("parameters"),
    }
    deferred = function.get("defer_loading")
    if deferred is None:
        deferred = tool.get("defer_loading")  # the tool's, given to its function
    for key, value in (("strict", function.get("strict")), ("defer_loading", deferred)):
        if value is not None:
            dumped_function[key] = value
    dumped = {"type": "function", "function": dumped_function}
    if tool.get("defer_loading") is not None:
        dumped["defer_loading"] = tool["defer_loading"]
    return dumped


def _walk(value: Any) -> Any:
    """Keys and values in order, so a reordering counts as a change."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)
    else:
        yield repr(value)
