"""llama.cpp's chat PEG builder (common/chat-peg-parser.cpp, `common_chat_peg_builder`).

A `Builder` with the tags the chat mapper (`chat_peg_mapper`) reads and the helpers
chat.cpp's handlers and the autoparser compose grammars with (`permute`, `optspace`,
`prefix`: `chat_peg_tags`), and the tool-call layouts (`chat_peg_tools`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.render.engines.llamacpp.chat_peg import chat_peg_tools
from app.render.engines.llamacpp.chat_peg.chat_peg_tags import ChatTagBuilder
from app.render.engines.llamacpp.peg.peg import Arena
from app.render.engines.llamacpp.peg.peg_builder import P


class ChatBuilder(ChatTagBuilder):
    """common_chat_peg_builder: the PEG builder with the chat tags and helpers
    (`chat_peg_tags`) and the tool-call layouts (`chat_peg_tools`)."""

    def standard_json_tools(
        self,
        section_start: str,
        section_end: str,
        tools: Any,
        parallel_tool_calls: bool,
        force_tool_calls: bool,
        name_key: str = "",
        args_key: str = "",
        array_wrapped: bool = False,
        function_is_key: bool = False,
        call_id_key: str = "",
        gen_call_id_key: str = "",
        parameters_order: Sequence[str] = (),
        accept_openai_wrapper: bool = False,
    ) -> P:
        """JSON tool calls between `section_start` and `section_end` (chat_peg_tools)."""
        return chat_peg_tools.standard_json_tools(
            self, section_start, section_end, tools, parallel_tool_calls, force_tool_calls,
            name_key, args_key, array_wrapped, function_is_key, call_id_key, gen_call_id_key,
            list(parameters_order), accept_openai_wrapper,
        )  # fmt: skip

    def standard_constructed_tools(
        self, markers: dict[str, str], tools: Any, parallel_tool_calls: bool, force_tool_calls: bool
    ) -> P:
        """XML-style tool calls: <tool_call><function=name><param=k>v</param>... ."""
        return chat_peg_tools.standard_constructed_tools(
            self, markers, tools, parallel_tool_calls, force_tool_calls
        )

    def python_style_tool_calls(
        self, tools: Any, parallel_tool_calls: bool, allow_json_literals: bool
    ) -> P:
        """Python-style calls: [name(arg="v", n=1), ...] (LFM2)."""
        return chat_peg_tools.python_style_tool_calls(
            self, tools, parallel_tool_calls, allow_json_literals
        )


def build_chat_peg_parser(fn: Callable[[ChatBuilder], P]) -> Arena:
    """Build a chat grammar whose root is `fn(builder)` (`build_chat_peg_parser`)."""
    builder = ChatBuilder()
    builder.set_root(fn(builder))
    return builder.build()
