"""The data the answer parser's pieces hand each other, as llama.cpp's structs carry it.

`ParseInputs` is `autoparser::generation_params` (common/chat-auto-parser.h): what
`common_chat_templates_apply_jinja` passes to a specialized handler or the autoparser,
after its message workarounds. `ChatTemplate` is the template with the two render
helpers every handler calls (`common_chat_template_direct_apply_impl` and
`common_chat_template_generation_prompt_impl`). `ChatParams` is `common_chat_params`,
the part of it that reading an answer needs: the format, the parser, the generation
prompt that the parser reads before the completion, and the thinking tags.

Reasoning formats, tool choices and continuations are kept as llama.cpp's lower-case
names ("auto", "none", "deepseek"; "auto", "required", "none"; ...), not as enums.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.render.engines.llamacpp.context import RenderContext, generation_prompt, render_messages
from app.render.limits import DEFAULT_LIMITS, RenderLimits

#: common_chat_format_name, by format: what `ParsedAnswer.parser` reports.
CONTENT_ONLY = "Content-only"
PEG_NATIVE = "peg-native"
PEG_GEMMA4 = "peg-gemma4"
PEG_MINIMAX_M3 = "peg-minimax-m3"


@dataclass(frozen=True)
class ChatTemplate:
    """common_chat_template: the (patched) source, its special tokens and capabilities."""

    source: str
    bos: str = ""
    eos: str = ""
    #: jinja::caps as `detect_capabilities` finds them (`supports_tool_calls`, ...).
    caps: dict[str, bool] = field(default_factory=dict)
    limits: RenderLimits = DEFAULT_LIMITS
    now: datetime | None = None

    def apply(
        self,
        inputs: ParseInputs,
        messages: list[dict[str, Any]] | None = None,
        tools: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> str:
        """common_chat_template_direct_apply_impl: render with the inputs' variables;
        `messages`, `tools` and `extra` override the inputs' as the C++ overrides do.
        A template error propagates (llama.cpp throws too)."""
        chosen = messages if messages is not None else inputs.messages
        return render_messages(
            self.context(inputs, tools, extra), chosen, inputs.add_generation_prompt
        )

    def context(
        self,
        inputs: ParseInputs,
        tools: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> RenderContext:
        """What a render of the inputs needs besides the messages."""
        # enable_thinking first, then the extra context (kwargs may override it), then
        # the handler's own additions: the C++ order of assignments.
        variables: dict[str, Any] = {"enable_thinking": inputs.enable_thinking}
        variables.update(inputs.extra_context)
        variables.update(extra or {})
        return RenderContext(
            source=self.source,
            tools=tools if tools is not None else (inputs.tools or None),
            variables=variables,
            bos=self.bos,
            eos=self.eos,
            add_bos=inputs.add_bos,
            add_eos=inputs.add_eos,
            limits=self.limits,
            now=self.now,
        )

    def generation_prompt(
        self,
        inputs: ParseInputs,
        messages: list[dict[str, Any]] | None = None,
        tools: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> str:
        """common_chat_template_generation_prompt_impl: what add_generation_prompt adds
        (the render with it, past its common prefix with the render without it)."""
        chosen = messages if messages is not None else inputs.messages
        return generation_prompt(self.context(inputs, tools, extra), chosen)


@dataclass(frozen=True)
class ParseInputs:
    """autoparser::generation_params: the request as a handler or the autoparser sees it."""

    template: ChatTemplate
    #: The messages as JSON, after common_chat_templates_apply_jinja's workarounds (the
    #: continued final message taken out: see `continue_msg`).
    messages: list[dict[str, Any]] = field(default_factory=list)
    #: The tools as JSON (type/function/name/description/parameters); None when the
    #: request has none (llama.cpp's `tools` is then JSON null, not an empty array).
    tools: list[dict[str, Any]] | None = None
    #: "auto", "required" or "none".
    tool_choice: str = "auto"
    json_schema: dict[str, Any] | None = None
    parallel_tool_calls: bool = True
    #: "auto", "none", "deepseek" or "deepseek-legacy".
    reasoning_format: str = "auto"
    enable_thinking: bool = True
    add_generation_prompt: bool = True
    #: "none", "auto", "reasoning" or "content" (auto is resolved before a handler runs).
    continue_final_message: str = "none"
    #: The final message being continued, as JSON (common_chat_msg's fields), or None.
    continue_msg: dict[str, Any] | None = None
    #: datetime, date_string and the chat_template_kwargs, parsed.
    extra_context: dict[str, Any] = field(default_factory=dict)
    add_bos: bool = False
    add_eos: bool = False
    grammar: str = ""

    @property
    def source(self) -> str:
        """The template source."""
        return self.template.source

    def has_tools(self) -> bool:
        """`inputs.tools.is_array() && !inputs.tools.empty()`, as the handlers test it."""
        return bool(self.tools)

    def has_continuation(self) -> bool:
        """generation_params::has_continuation: a non-empty final message is continued."""
        return self.continue_final_message != "none" and not _empty_message(self.continue_msg)

    def extract_reasoning(self) -> bool:
        """`reasoning_format != COMMON_REASONING_FORMAT_NONE`, as every builder tests it."""
        return self.reasoning_format != "none"

    def continue_reasoning(self) -> str:
        """The continued message's reasoning_content ("" without one)."""
        return str((self.continue_msg or {}).get("reasoning_content") or "")

    def continue_content(self) -> str:
        """common_chat_msg::render_content of the continued message: its text, or its
        text parts joined with blank lines ("\\n\\n", the C++ default delimiter)."""
        content = (self.continue_msg or {}).get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [p.get("text", "") for p in content if p.get("type") == "text"]
            return "\n\n".join(texts)
        return ""


def _empty_message(message: dict[str, Any] | None) -> bool:
    """common_chat_msg::empty on a message's JSON."""
    if not message:
        return True
    keys = ("content", "reasoning_content", "tool_calls", "name", "tool_call_id")
    return not any(message.get(key) for key in keys)


@dataclass
class ChatParams:
    """common_chat_params: what a handler or the autoparser derives for one request."""

    #: common_chat_format_name of the format (`PEG_NATIVE`, ...).
    format: str = CONTENT_ONLY
    #: The PEG parser (chat_peg's arena / root, built with its builder); None: the
    #: pure-content parser common_chat_peg_parse falls back to.
    parser: Any = None
    #: What the parser reads before the completion (common_chat_peg_parse prepends it).
    generation_prompt: str = ""
    prompt: str = ""
    supports_thinking: bool = False
    thinking_start_tag: str = ""
    thinking_end_tags: tuple[str, ...] = ()
    preserved_tokens: tuple[str, ...] = ()
    additional_stops: tuple[str, ...] = ()
    #: Sentences on how the params were derived (the handler's or autoparser's findings),
    #: for the page's notes; llama.cpp logs these at most.
    notes: list[str] = field(default_factory=list)
