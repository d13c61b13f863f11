"""Run the extracted Ollama test cases against the engine's renderers and parsers.

`python -m oracles.ollama.run` prints, per family, the cases that pass, fail and are
skipped (with the reason); `tests/test_ollama_suite.py` runs each case as a test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CASES = Path(__file__).resolve().parent / "cases.json"
HARMONY = "gpt-oss (harmony)"


class NotBuilt(Exception):
    """The case needs a part of Ollama the engine does not reproduce (the reason)."""


@dataclass(frozen=True)
class Case:
    """One extracted case: its upstream file and test, name and fields."""

    file: str
    test: str
    name: str
    fields: dict[str, Any]
    local: dict[str, Any]
    unsupported: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """A stable test id."""
        return f"{self.test}/{self.name}"


def load() -> tuple[str, list[Case], dict[str, dict[str, str]]]:
    """The Ollama commit, every case, and per file the tests left out with reasons."""
    doc = json.loads(CASES.read_text(encoding="utf-8"))
    cases = [
        Case(
            path,
            c["test"],
            c["name"],
            c["fields"],
            part["locals"].get(c["test"], {}),
            tuple(c.get("unsupported", ())),
        )
        for path, part in doc["files"].items()
        for c in part["cases"]
    ]
    skipped = {path: part["skipped"] for path, part in doc["files"].items()}
    return doc["ollama"], cases, skipped


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
    return _call_json(name, arguments), _call_json(want["name"], want.get("arguments") or {})


def _call_json(name: str, arguments: dict[str, Any]) -> str:
    """A tool call as Ollama's tests compare them: the name and each argument's JSON."""
    from app.render.engines.ollama import gojson

    return name + gojson.marshal(arguments)


def _parser_unit(module: str, function: str, *fields: str) -> Callable:
    """A runner of a parser module's helper on the case's fields; want `want`."""

    def run(case: Case) -> tuple[Any, Any]:
        import importlib

        helper = getattr(
            importlib.import_module(f"app.render.engines.ollama.parsers.{module}"), function
        )
        return helper(*(case.fields.get(f) for f in fields)), case.fields["want"]

    return run


def _session_parser(spec: dict[str, Any]) -> Callable[..., Any]:
    """The engine's parser for a test's `parser := ...` (NotBuilt when it is not there)."""
    from app.render.engines.ollama.parsers import PARSERS, qwen3

    if spec.get("type") == "Qwen3Parser":
        fields = spec["fields"]
        return qwen3.make(fields["hasThinkingSupport"], fields["defaultThinking"])
    name = spec.get("name") or {"GLM47Parser": "glm-4.7"}.get(spec.get("type", ""), "")
    if name not in PARSERS:
        raise NotBuilt(f"the parser {name or spec.get('type')!r} is not reproduced yet")
    return PARSERS[name]


def _joined(steps: list[dict[str, Any]], field: str) -> Any:
    """A check joined over the steps (None when a step does not make it)."""
    values = [step["checks"].get(field) for step in steps]
    kind = int if field == "calls" else str
    if not all(isinstance(value, kind) for value in values):
        return None  # a step without this check, or one against another variable
    return sum(values) if field == "calls" else "".join(values)


def _session(case: Case) -> tuple[Any, Any]:
    """A statement-style parser test: its Adds' texts read at once, its checks joined."""
    f = case.fields
    tools, _last, think = f["init"]
    message = _session_parser(f["parser"])("".join(s["text"] for s in f["steps"]), tools, think)
    calls = [_call_json(name, arguments) for name, arguments in message.tool_calls]
    got, want = {}, {}
    for field in ("content", "thinking", "calls"):
        joined = _joined(f["steps"], field)
        if isinstance(joined, (str, int)):
            want[field] = joined
            got[field] = len(calls) if field == "calls" else getattr(message, field)
    before = 0
    for step in f["steps"]:
        if "first_name" in step["checks"]:
            want[f"name {before}"] = step["checks"]["first_name"]
            got[f"name {before}"] = message.tool_calls[before][0] if len(calls) > before else None
        before += (
            step["checks"].get("calls", 0) if isinstance(step["checks"].get("calls"), int) else 0
        )
    if "want" in f:
        wanted = f["want"] if isinstance(f["want"], list) else [f["want"]]
        want["tool calls"] = [
            _call_json(w["function"]["name"], w["function"]["arguments"]) for w in wanted
        ]
        got["tool calls"] = calls[: len(wanted)]
    if "want_args" in f:
        want["first arguments"] = _call_json("", f["want_args"])
        got["first arguments"] = _call_json("", message.tool_calls[0][1]) if calls else None
    return got, want


def _glm_call(case: Case) -> tuple[Any, Any]:
    """TestGLM46ToolCallParsing: one raw call read with the case's tools."""
    from app.render.engines.ollama.parsers import glm46

    name, arguments = glm46.parse_tool_call(case.fields["rawToolCall"], case.fields["tools"])
    want = case.fields["wantToolCall"]["function"]
    return _call_json(name, arguments), _call_json(want["name"], want.get("arguments") or {})


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


def _harmony(name: str) -> Callable[[Case], tuple[Any, Any]]:
    """A runner from run_harmony.py on the case's fields."""

    def run(case: Case) -> tuple[Any, Any]:
        from oracles.ollama import run_harmony

        return getattr(run_harmony, name)(case.fields)

    return run


def _deepseek(case: Case) -> tuple[Any, Any]:
    """TestDeepSeekParser(_Streaming, _EdgeCases): the input (chunks joined) read at once."""
    from app.render.engines.ollama.parsers import PARSERS

    f = case.fields
    text = f["input"] if "input" in f else "".join(f["chunks"])
    message = PARSERS["deepseek3"](text, [], f.get("hasThinking", False))
    got = {"content": message.content, "thinking": message.thinking}
    want = {"content": f.get("expectedContent", ""), "thinking": f.get("expectedThinking", "")}
    if case.test != "TestDeepSeekParser_EdgeCases":  # that test does not check the calls
        got["calls"] = [_call_json(name, arguments) for name, arguments in message.tool_calls]
        wanted = f.get("expectedCalls") or []
        want["calls"] = [
            _call_json(c["function"]["name"], c["function"].get("arguments") or {}) for c in wanted
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
        return _call_json(name, arguments), "error"
    want = case.fields["expected"]["function"]
    return _call_json(name, arguments), _call_json(want["name"], want.get("arguments") or {})


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
    "TestHeaderParsing": (HARMONY, _harmony("header")),
    "TestHarmonyParserHeaderEvent": (HARMONY, _harmony("header_event")),
    "TestHarmonyParserNonStreaming": (HARMONY, _harmony("non_streaming")),
    "TestHarmonyParserStreaming": (HARMONY, _harmony("streaming")),
    "TestFunctionConvertToValidChars": (HARMONY, _harmony("valid_chars")),
    "TestFunctionConvertAndAdd": (HARMONY, _harmony("convert_and_add")),
    "TestRepairGLM46XML": ("glm-4.7", _parser_unit("glm46_repair", "repair", "input")),
    "TestGLM46ParserRejectsIncompleteToolCallOnDone": ("glm-4.7", _glm_rejects),
}

#: Upstream file -> family, for the tests without a runner yet.
FAMILY_OF_FILE = {
    "model/renderers/qwen3coder_test.go": "qwen3-coder",
    "model/renderers/deepseek3_test.go": "deepseek3.1",
    "model/renderers/glm47_test.go": "glm-4.7",
    "model/renderers/gemma4_reference_test.go": "gemma4",
    "model/parsers/qwen3_test.go": "qwen3",
    "model/parsers/qwen3coder_test.go": "qwen3-coder",
    "model/parsers/deepseek3_test.go": "deepseek3.1",
    "model/parsers/glm47_test.go": "glm-4.7",
    "model/parsers/glm46_test.go": "glm-4.7",
    "model/parsers/gemma4_test.go": "gemma4",
    "harmony/harmonyparser_test.go": HARMONY,
}


def family(case: Case) -> str:
    """The family a case belongs to."""
    return RUNNERS[case.test][0] if case.test in RUNNERS else FAMILY_OF_FILE[case.file]


def _runner(case: Case) -> Callable[[Case], tuple[Any, Any]] | None:
    """The runner of a case: its test's, or the session runner for a parser session."""
    if case.test in RUNNERS:
        return RUNNERS[case.test][1]
    return _session if "steps" in case.fields and "parser" in case.fields else None


#: Cases whose expectation depends on where the stream is cut, and why ours differs.
CHUNKING = {
    "TestDeepSeekParser_Streaming/streaming_with_split_tags": (
        "its expected content keeps the space before the tool calls because that space "
        "arrived in an earlier chunk (deepseek3 emits content at once); the engine's "
        "parsers read the answer as one chunk, which trims it (Content beforeafter)"
    ),
}


def run(case: Case) -> tuple[Any, Any]:
    """(what ours gives, what Ollama's test expects); NotBuilt when it cannot run."""
    if case.id in CHUNKING:
        raise NotBuilt(CHUNKING[case.id])
    if case.unsupported:
        raise NotBuilt(f"the case holds Go code, not data: {', '.join(case.unsupported)}")
    runner = _runner(case)
    if runner is None:
        raise NotBuilt(f"{case.test} ({case.file}) is not run yet: its part is not reproduced")
    return runner(case)


def same(got: Any, want: Any) -> bool:
    """Equal as Go's DeepEqual sees decoded JSON: 1 and 1.0 differ, so compare typed."""
    return json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def main() -> None:
    """Print the tally per family: passed / run / total, and the skip reasons."""
    commit, cases, skipped = load()
    tally: dict[str, list[int]] = {}
    reasons: dict[str, int] = {}
    for case in cases:
        counts = tally.setdefault(family(case), [0, 0, 0])
        counts[2] += 1
        try:
            got, want = run(case)
        except NotBuilt as why:
            reasons[f"{family(case)}: {why}"] = reasons.get(f"{family(case)}: {why}", 0) + 1
            continue
        counts[1] += 1
        counts[0] += same(got, want)
    print(f"Ollama {commit[:7]}: family: passed / run / extracted")
    for name, (passed, ran, total) in tally.items():
        print(f"  {name}: {passed} / {ran} / {total}")
    print("Skipped cases:")
    for why, count in reasons.items():
        print(f"  {count} x {why}")
    print("Test functions not extracted:")
    for path, tests in skipped.items():
        for test, why in tests.items():
            print(f"  {path}::{test}: {why}")


if __name__ == "__main__":
    main()
