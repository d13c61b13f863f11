"""How each extracted Ollama test is run against the engine's renderers and parsers:
test function -> (family, runner); a runner gives (what ours gives, what Ollama's test
expects) or raises NotBuilt."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from oracles.ollama.case import HARMONY, Case, NotBuilt


def _renderer(name: str) -> Callable[..., str]:
    """The engine's renderer by its Modelfile name, or NotBuilt."""
    from app.render.engines.ollama.renderers import RENDERERS

    if name not in RENDERERS:
        raise NotBuilt(f"the {name!r} renderer is not reproduced yet")
    return RENDERERS[name]


def _render(name: str, messages: str, tools: str | None, think: str | None) -> Callable:
    """A runner: render the case's fields with renderer `name`; want `expected`."""

    def run(case: Case) -> tuple[Any, Any]:
        f = case.fields
        got = _renderer(name)(
            f.get(messages) or [], f.get(tools) if tools else None, f.get(think) if think else None
        )
        return got, f.get("expected", f.get("want"))

    return run


def _qwen3coder_unit(function: str, arg: str) -> Callable:
    """A runner of one of qwen3coder.go's helpers on the case's `arg` field."""

    def run(case: Case) -> tuple[Any, Any]:
        from app.render.engines.ollama.renderers import qwen3coder

        return getattr(qwen3coder, function)(case.fields.get(arg)), case.fields["expected"]

    return run


def _gemma4_variant(case: Case) -> tuple[Any, Any]:
    """TestGemma4RendererVariants...: the named renderer on the test's shared messages."""
    renderer = _renderer(case.fields["rendererName"])
    return renderer(case.local["messages"], None, None), case.fields["expected"]


def _qwen3coder_events(case: Case) -> tuple[Any, Any]:
    """TestQwenParserStreaming: the events after each step (steps with none left out)."""
    from app.render.engines.ollama.parsers import qwen3coder

    buffer, inside, got, want = "", False, [], []
    for step in case.fields["steps"]:
        found, buffer, inside = qwen3coder.events(buffer + step["input"], inside)
        names = {
            "content": ("qwenEventContent", "content"),
            "call": ("qwenEventRawToolCall", "raw"),
        }
        if found or step["wantEvents"]:
            got.append([{"event": names[k][0], names[k][1]: text} for k, text in found])
            want.append(step["wantEvents"])
    return got, want


def _qwen3coder_call(case: Case) -> tuple[Any, Any]:
    """TestQwenToolParser: one raw call read with the step's tools (compared as Go JSON)."""
    from app.render.engines.ollama.parsers import qwen3coder

    name, arguments = qwen3coder.parse_tool_call(case.fields["rawToolCall"], case.fields["tools"])
    want = case.fields["wantToolCall"]["function"]
    return call_json(name, arguments), call_json(want["name"], want.get("arguments") or {})


def call_json(name: str, arguments: dict[str, Any]) -> str:
    """A tool call as Ollama's tests compare them: the name and each argument's JSON."""
    from app.render.engines.ollama import gojson

    return name + gojson.marshal(arguments)


def _parser_unit(module: str, function: str, *fields: str) -> Callable:
    """A runner of a parser module's helper on the case's fields; want `want`."""

    def run(case: Case) -> tuple[Any, Any]:
        helper = getattr(
            importlib.import_module(f"app.render.engines.ollama.parsers.{module}"), function
        )
        return helper(*(case.fields.get(f) for f in fields)), case.fields["want"]

    return run


def _glm_call(case: Case) -> tuple[Any, Any]:
    """TestGLM46ToolCallParsing: one raw call read with the case's tools."""
    from app.render.engines.ollama.parsers import glm46

    name, arguments = glm46.parse_tool_call(case.fields["rawToolCall"], case.fields["tools"])
    want = case.fields["wantToolCall"]["function"]
    return call_json(name, arguments), call_json(want["name"], want.get("arguments") or {})


def _glm_rejects(case: Case) -> tuple[Any, Any]:
    """TestGLM46ParserRejectsIncompleteToolCallOnDone: the answer's parse fails so."""
    from app.render.engines.ollama.parsers import glm46
    from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

    tools = case.local["tools"]
    if isinstance(tools, dict) and "$unsupported" in tools:
        raise NotBuilt(f"its tools come from Go statements, not data: {tools['$unsupported']}")
    try:
        glm46.make(start_thinking=False)(case.fields["input"], tools, None)
    except ToolCallError as error:
        return "incomplete GLM tool call" in str(error), True
    return "parsed without an error", True


def _deepseek(case: Case) -> tuple[Any, Any]:
    """TestDeepSeekParser(_Streaming, _EdgeCases): the input (chunks joined) read at once."""
    from app.render.engines.ollama.parsers import PARSERS

    f = case.fields
    text = f["input"] if "input" in f else "".join(f["chunks"])
    message = PARSERS["deepseek3"](text, [], f.get("hasThinking", False))
    got = {"content": message.content, "thinking": message.thinking}
    want = {"content": f.get("expectedContent", ""), "thinking": f.get("expectedThinking", "")}
    if case.test != "TestDeepSeekParser_EdgeCases":  # that test does not check the calls
        got["calls"] = [call_json(name, arguments) for name, arguments in message.tool_calls]
        wanted = f.get("expectedCalls") or []
        want["calls"] = [
            call_json(c["function"]["name"], c["function"].get("arguments") or {}) for c in wanted
        ]
    return got, want


def _deepseek_call(case: Case) -> tuple[Any, Any]:
    """TestDeepSeek3Parser_parseToolCallContent: one call's text, or its error."""
    from app.render.engines.ollama.parsers import deepseek3
    from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

    try:
        name, arguments = deepseek3.parse_tool_call_content(case.fields["content"])
    except ToolCallError:
        return "error", "error" if case.fields.get("expectError") else "a tool call"
    if case.fields.get("expectError"):
        return call_json(name, arguments), "error"
    want = case.fields["expected"]["function"]
    return call_json(name, arguments), call_json(want["name"], want.get("arguments") or {})


def _from(module: str, name: str, *args: Any) -> Callable[[Case], tuple[Any, Any]]:
    """A runner from oracles/ollama/<module>.py on the case's fields (built with args)."""

    def run(case: Case) -> tuple[Any, Any]:
        runner = getattr(importlib.import_module(f"oracles.ollama.{module}"), name)
        return (runner(*args) if args else runner)(case.fields)

    return run


#: Test function -> (family, runner).
RUNNERS: dict[str, tuple[str, Callable[[Case], tuple[Any, Any]]]] = {
    "TestQwen3CoderRenderer": ("qwen3-coder", _render("qwen3-coder", "msgs", "tools", None)),
    "TestFormatToolCallArgument": ("qwen3-coder", _qwen3coder_unit("format_argument", "arg")),
    "TestQwen3ToolDefinitionTypes": (
        "qwen3-coder",
        _qwen3coder_unit("format_type", "propertyType"),
    ),
    "TestDeepSeekRenderer": (
        "deepseek3.1",
        _render("deepseek3.1", "messages", "tools", "thinkValue"),
    ),
    "TestGLM47Renderer": ("glm-4.7", _render("glm-4.7", "messages", "tools", "thinkValue")),
    "TestGemma4RendererMatchesReference": (
        "gemma4",
        _render("gemma4", "messages", "tools", "think"),
    ),
    "TestGemma4RendererVariantsMatchExpectedGenerationPrompt": ("gemma4", _gemma4_variant),
    "TestQwenParserStreaming": ("qwen3-coder", _qwen3coder_events),
    "TestQwenToolParser": ("qwen3-coder", _qwen3coder_call),
    "TestQwenToolCallValueParsing": (
        "qwen3-coder",
        _parser_unit("qwen3coder", "parse_value", "raw", "paramType"),
    ),
    "TestQwenXMLTransform": ("qwen3-coder", _parser_unit("qwen3coder", "transform_to_xml", "raw")),
    "TestTrailingWhitespaceLen": (
        "qwen3-coder",
        _parser_unit("message", "trailing_whitespace_len", "s"),
    ),
    "TestTrailingWhitespaceLenUnicode": (
        "qwen3-coder",
        _parser_unit("message", "trailing_whitespace_len", "input"),
    ),
    "TestOverlapFunction": ("qwen3-coder", _parser_unit("message", "overlap", "s", "delim")),
    "TestGLM46ToolCallParsing": ("glm-4.7", _glm_call),
    "TestDeepSeekParser": ("deepseek3.1", _deepseek),
    "TestDeepSeekParser_Streaming": ("deepseek3.1", _deepseek),
    "TestDeepSeekParser_EdgeCases": ("deepseek3.1", _deepseek),
    "TestDeepSeek3Parser_parseToolCallContent": ("deepseek3.1", _deepseek_call),
    "TestGemma4Parser": ("gemma4", _from("run_gemma4", "parser")),
    "TestGemma4Parser_StreamingSplitThinkingTag": (
        "gemma4",
        _from("run_gemma4", "chunks", True, False),
    ),
    "TestGemma4Parser_IgnoresExtraToolCallCloseTags": (
        "gemma4",
        _from("run_gemma4", "chunks", False, True),
    ),
    "TestGemma4Parser_IgnoresToolResponseBoundaryAfterToolCall": (
        "gemma4",
        _from("run_gemma4", "chunks", False, True),
    ),
    "TestGemma4ArgsToJSON": ("gemma4", _from("run_gemma4", "unit", "args_to_json", "input")),
    "TestRepairGemma4MissingStringDelimiter": (
        "gemma4",
        _from("run_gemma4", "unit", "missing_string_delimiter", "input"),
    ),
    "TestRepairGemma4MissingObjectClose": (
        "gemma4",
        _from("run_gemma4", "unit", "missing_object_close", "input"),
    ),
    "TestRepairGemma4SingleQuotedValues": (
        "gemma4",
        _from("run_gemma4", "unit", "single_quoted_values", "input"),
    ),
    "TestRepairGemma4RawTerminalStringValue": ("gemma4", _from("run_gemma4", "raw_terminal")),
    "TestGemma4RepairCandidates": (
        "gemma4",
        _from("run_gemma4", "unit", "repair_candidates", "input", "toolName", "tools"),
    ),
    "TestParseGemma4ToolCall_RepairsIssue15315Examples": (
        "gemma4",
        _from("run_gemma4", "tool_call"),
    ),
    "TestParseGemma4ToolCall_RepairsMultipleProperties": (
        "gemma4",
        _from("run_gemma4", "tool_call"),
    ),
    "TestHeaderParsing": (HARMONY, _from("run_harmony", "header")),
    "TestHarmonyParserHeaderEvent": (HARMONY, _from("run_harmony", "header_event")),
    "TestHarmonyParserNonStreaming": (HARMONY, _from("run_harmony", "non_streaming")),
    "TestHarmonyParserStreaming": (HARMONY, _from("run_harmony", "streaming")),
    "TestFunctionConvertToValidChars": (HARMONY, _from("run_harmony", "valid_chars")),
    "TestFunctionConvertAndAdd": (HARMONY, _from("run_harmony", "convert_and_add")),
    "TestLFM2Renderer_ChatTemplateParity": ("lfm2", _from("run_lfm2", "render")),
    "TestLFM2Renderer_Images": ("lfm2", _from("run_lfm2", "images")),
    "TestLFM2Renderer_JSONFormatting": ("lfm2", _from("run_lfm2", "json_formatting")),
    "TestLFM2Parser": ("lfm2", _from("run_lfm2", "whole", True)),
    "TestLFM2Parser_Streaming": ("lfm2", _from("run_lfm2", "whole", True)),
    "TestLFM2Parser_EdgeCases": ("lfm2", _from("run_lfm2", "whole", False)),
    "TestLFM2Parser_parseToolCallContent": ("lfm2", _from("run_lfm2", "calls", True)),
    "TestLFM2Parser_parseToolCallsContent": ("lfm2", _from("run_lfm2", "calls", False)),
    "TestLFM2Parser_ImagePlaceholdersPreserved": ("lfm2", _from("run_lfm2", "images_kept")),
    "TestOlmo3Renderer": ("olmo3", _from("run_olmo3", "render")),
    "TestOlmo3ThinkRenderer": ("olmo3", _from("run_olmo3", "render_think")),
    "TestOlmo3Parser": ("olmo3", _from("run_olmo3", "stream")),
    "TestOlmo3Parser_Streaming": ("olmo3", _from("run_olmo3", "stream")),
    "TestParseOlmo3FunctionCalls": ("olmo3", _from("run_olmo3", "function_calls")),
    "TestParseOlmo3Value": ("olmo3", _from("run_olmo3", "value")),
    "TestOlmo3ThinkParser": ("olmo3", _from("run_olmo3", "think")),
    "TestOlmo3ThinkParser_Streaming": ("olmo3", _from("run_olmo3", "think")),
    "TestOlmo3ThinkParser_StreamingEdgeCases": ("olmo3", _from("run_olmo3", "think")),
    "TestOlmo3ThinkParser_ThinkBoundary": ("olmo3", _from("run_olmo3", "think")),
    "TestRepairGLM46XML": ("glm-4.7", _parser_unit("glm46_repair", "repair", "input")),
    "TestGLM46ParserRejectsIncompleteToolCallOnDone": ("glm-4.7", _glm_rejects),
}
