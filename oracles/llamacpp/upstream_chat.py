"""llama.cpp's own parse test cases as data: `oracles/llamacpp/test_chat_parse_cases.json`.

`tests/test-chat.cpp` checks its PEG chat parsers with cases built by a
fluent tester: a template file, the request's inputs, a model output and the message
the parser must return. Rather than transcribe them by hand, the recorder makes an
instrumented copy of that file in the build folder (never in the repository): each
case, as the test runs it, is written out as a JSON line with the test's own verdict
and the library's non-partial parse. Each non-partial case is then put to the answer
harness (the real library, with the same inputs) and compared as the test compares
(content and reasoning stripped of surrounding whitespace, arguments as JSON values).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from oracles.llamacpp import build as build_mod
from tests.support import REPO
from tests.support.shared_data import TEMPLATES_DIR

OUT = REPO / "oracles" / "llamacpp" / "test_chat_parse_cases.json"
TEST_FILE = "tests/test-chat.cpp"
TOOL_CHOICES = {0: "auto", 1: "required", 2: "none"}
CONTINUATIONS = {0: None, 1: True, 2: "reasoning_content", 3: "content"}

#: Written into the copy just before the fluent builder: dumps one case per run().
_DUMP_HELPER = r"""
// The dump uses nlohmann's JSON itself: later builds' tests use `common_json`, which has
// no push_back of objects nor dump options; the library's JSON is taken by its text.
using dump_json = nlohmann::ordered_json;

static FILE * g_case_dump = nullptr;

static dump_json dump_case_msg(const common_chat_msg & m) {
    dump_json calls = dump_json::array();
    for (const auto & c : m.tool_calls) {
        calls.push_back({{"name", c.name}, {"arguments", c.arguments}, {"id", c.id}});
    }
    dump_json out = {{"role", m.role}, {"content", m.content},
                {"reasoning_content", m.reasoning_content}, {"tool_calls", calls}};
    if (!m.content_parts.empty()) {
        dump_json parts = dump_json::array();
        for (const auto & p : m.content_parts) {
            parts.push_back({{"type", p.type}, {"text", p.text}});
        }
        out["content_parts"] = parts;
    }
    if (!m.tool_name.empty()) { out["name"] = m.tool_name; }
    if (!m.tool_call_id.empty()) { out["tool_call_id"] = m.tool_call_id; }
    return out;
}

static dump_json dump_case_input_msg(const common_chat_msg & m) {
    dump_json out = {{"role", m.role}};
    if (!m.content_parts.empty()) {
        dump_json parts = dump_json::array();
        for (const auto & p : m.content_parts) {
            parts.push_back({{"type", p.type}, {"text", p.text}});
        }
        out["content"] = parts;
    } else {
        out["content"] = m.content;
    }
    if (!m.reasoning_content.empty()) { out["reasoning_content"] = m.reasoning_content; }
    if (!m.tool_calls.empty()) {
        dump_json calls = dump_json::array();
        for (const auto & c : m.tool_calls) {
            dump_json call = {{"type", "function"},
                         {"function", {{"name", c.name}, {"arguments", c.arguments}}}};
            if (!c.id.empty()) { call["id"] = c.id; }
            calls.push_back(call);
        }
        out["tool_calls"] = calls;
    }
    if (!m.tool_name.empty()) { out["name"] = m.tool_name; }
    if (!m.tool_call_id.empty()) { out["tool_call_id"] = m.tool_call_id; }
    return out;
}

static void dump_peg_case(const std::string & path, common_chat_templates * tmpls,
                          const peg_test_case & given, const std::function<void()> & run_test) {
    peg_test_case tc = given;
    if (tc.params.messages.empty()) { tc.params.messages = { message_user }; }
    if (tc.expect.role.empty()) { tc.expect.role = "assistant"; }
    dump_json j;
    j["template"] = path;
    j["input"] = tc.input;
    j["is_partial"] = tc.is_partial;
    dump_json msgs = dump_json::array();
    for (const auto & m : tc.params.messages) { msgs.push_back(dump_case_input_msg(m)); }
    j["messages"] = msgs;
    j["tools"] = dump_json::parse(common_chat_tools_to_json_oaicompat(tc.params.tools).dump());
    j["tool_choice"] = (int) tc.params.tool_choice;
    j["reasoning_format"] = common_reasoning_format_name(tc.params.reasoning_format);
    j["enable_thinking"] = tc.params.enable_thinking;
    j["parallel_tool_calls"] = tc.params.parallel_tool_calls;
    j["add_generation_prompt"] = tc.params.add_generation_prompt;
    j["continue_final_message"] = (int) tc.params.continue_final_message;
    j["json_schema"] = tc.params.json_schema;
    j["expect"] = dump_case_msg(tc.expect);
    try {
        auto parser = make_peg_parser(tmpls, tc.params);
        j["format"] = common_chat_format_name(parser.params_.format);
        j["generation_prompt"] = parser.params_.generation_prompt;
        if (!tc.is_partial) {
            try {
                j["actual"] = dump_case_msg(parser.parse(tc.input, false));
            } catch (const std::exception & e) {
                j["actual_error"] = e.what();
            }
        }
    } catch (const std::exception & e) {
        j["apply_error"] = e.what();
    }
    try {
        run_test();
        j["test_passed"] = true;
    } catch (const std::exception & e) {
        j["test_passed"] = false;
        j["test_error"] = std::string(e.what()).substr(0, 2000);
    }
    const auto text = j.dump(-1, ' ', false, dump_json::error_handler_t::replace);
    fprintf(g_case_dump, "%s\n", text.c_str());
    fflush(g_case_dump);
}

"""

_RUN_CALL = (
    "test_peg_parser(tester_.tmpls_.get(), [this](peg_test_case & t) { t = tc_; }, "
    "tester_.detailed_debug_);"
)
_NEW_MAIN = r"""
int main() {
    const char * out = getenv("LLAMACPP_CASES_OUT");
    g_case_dump = fopen(out ? out : "cases.jsonl", "w");
    try {
        test_template_output_peg_parsers(false);
    } catch (const std::exception & e) {
        fprintf(stderr, "test_template_output_peg_parsers stopped: %s\n", e.what());
        return 1;
    }
    fclose(g_case_dump);
    return 0;
}
"""


def instrumented_copy(llama_cpp: Path, build: Path) -> Path:
    """Write the instrumented copy of tests/test-chat.cpp into `build`; its path."""
    text = (llama_cpp / TEST_FILE).read_text(encoding="utf-8")
    marker = "// Fluent builder for PEG parser tests"
    for needle in (marker, _RUN_CALL, "int main(int argc, char ** argv) {"):
        if text.count(needle) != 1:
            raise RuntimeError(f"{TEST_FILE} changed: {needle!r} is not there once")
    text = "#include <nlohmann/json.hpp>\n" + text.replace(marker, _DUMP_HELPER + marker)
    wrapped = (
        f"dump_peg_case(tester_.template_path(), tester_.tmpls_.get(), tc_, [&] {{ {_RUN_CALL} }});"
    )
    text = text.replace(_RUN_CALL, wrapped)
    # The upstream main (and the helpers only it calls) become dead code, dropped.
    text = text.replace(
        "int main(int argc, char ** argv) {",
        "[[maybe_unused]] static int upstream_main(int argc, char ** argv) {",
    )
    copy = build / "test-chat-dump.cpp"
    copy.write_text(text + _NEW_MAIN, encoding="utf-8")
    return copy


def run_dump(build: Path, llama_cpp: Path) -> list[dict[str, Any]]:
    """Build the instrumented test and run it (from the source folder, where its template
    paths resolve); the cases it dumped, in the order the test runs them."""
    copy = instrumented_copy(llama_cpp, build)
    build_mod.configure(build, llama_cpp, copy)
    program = build_mod.build_target(build, build_mod.TEST_CHAT_DUMP)
    out = build / "test-chat-cases.jsonl"
    with (build / "test-chat-dump.log").open("w", encoding="utf-8") as log:
        subprocess.run(
            [str(program)],
            cwd=llama_cpp,
            env=dict(os.environ, LLAMACPP_CASES_OUT=str(out)),
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line]


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def same_as_test(expect: dict[str, Any], got: dict[str, Any]) -> bool:
    """Whether `got` passes the test's comparison with `expect` (assert_msg_equals with
    whitespace differences ignored: contents stripped, arguments compared as JSON)."""
    if (expect["content"] or "").strip() != (got.get("content") or "").strip():
        return False
    if (expect["reasoning_content"] or "").strip() != (got.get("reasoning_content") or "").strip():
        return False
    want, have = expect["tool_calls"], got.get("tool_calls", [])
    if len(want) != len(have):
        return False
    return all(
        w["name"] == h["name"]
        and w["id"] == h["id"]
        and _json_value(w["arguments"]) == _json_value(h["arguments"])
        for w, h in zip(want, have, strict=True)
    )


def harness_line(index: int, case: dict[str, Any], source: str) -> dict[str, Any]:
    """The harness request that gives the library exactly the test's inputs."""
    line = {
        "id": index,
        "template": source,
        "messages": case["messages"],
        "tools": case["tools"],
        "tool_choice": TOOL_CHOICES[case["tool_choice"]],
        "add_generation_prompt": case["add_generation_prompt"],
        "enable_thinking": case["enable_thinking"],
        "reasoning_format": case["reasoning_format"],
        "parallel_tool_calls": case["parallel_tool_calls"],
        "json_schema": case["json_schema"],
        "server_prefill": False,
        "completions": [case["input"]],
    }
    continuation = CONTINUATIONS[case["continue_final_message"]]
    if continuation is not None:
        line["continue_final_message"] = continuation
    return line


def _skip_reason(case: dict[str, Any], shared: bool) -> str:
    """Why a dumped case is not verified: a partial parse, a template that fails to apply,
    or a template the shared data lacks (the tests could not run it: the repository holds
    no copy of llama.cpp's templates)."""
    if case["is_partial"]:
        return "partial"
    if "apply_error" in case:
        return "apply_error"
    return "template" if not shared else "apply_error"


def record(build: Path, llama_cpp: Path, identity: dict[str, str]) -> str:
    """Extract, verify and write the test cases; a one-line summary."""
    document = extract(build, llama_cpp, identity)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(document, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    return f"{OUT}: {document['counts']}"


def extract(build: Path, llama_cpp: Path, identity: dict[str, str]) -> dict[str, Any]:
    """Extract the test cases and verify them with the harness; the fixture document."""
    dumped = run_dump(build, llama_cpp)
    program = build_mod.ensure_harness(build, llama_cpp)
    shas: dict[str, dict[str, Any]] = {}
    for name in sorted({Path(c["template"]).name for c in dumped}):
        upstream = (llama_cpp / "models" / "templates" / name).read_bytes()
        shared = TEMPLATES_DIR / name
        shas[name] = {
            "sha256": hashlib.sha256(upstream).hexdigest(),
            "shared": shared.is_file()
            and hashlib.sha256(shared.read_bytes()).hexdigest()
            == hashlib.sha256(upstream).hexdigest(),
        }
    lines, cases = [], []
    for index, raw in enumerate(dumped):
        name = Path(raw["template"]).name
        case = {
            "index": index,
            "template": name,
            **{k: v for k, v in raw.items() if k != "template"},
        }
        cases.append(case)
        if not raw["is_partial"] and "apply_error" not in raw and shas[name]["shared"]:
            source = (llama_cpp / "models" / "templates" / name).read_text(encoding="utf-8")
            lines.append(harness_line(index, raw, source))
    answers = {a["id"]: a for a in build_mod.run_harness(program, lines, build / "verify.log")}
    counts = {"extracted": len(cases), "verified_equal": 0, "differs": 0, "skipped": 0}
    for case in cases:
        answer = answers.get(case["index"])
        if answer is None:
            case["verified"] = {"skipped": _skip_reason(case, shas[case["template"]]["shared"])}
            counts["skipped"] += 1
            continue
        result = (answer.get("results") or [{}])[0]
        verdict: dict[str, Any] = {"format": answer.get("format")}
        if "result" in result:
            verdict["result"] = result["result"]
            verdict["agrees_with_expect"] = same_as_test(case["expect"], result["result"])
            verdict["equals_test_parse"] = "actual" in case and all(
                case["actual"][k] == result["result"][k]
                for k in ("content", "reasoning_content", "tool_calls")
            )
        else:
            verdict["error"] = result.get("error") or answer.get("error")
            verdict["agrees_with_expect"] = False
        counts["verified_equal" if verdict["agrees_with_expect"] else "differs"] += 1
        case["verified"] = verdict
    return {
        **identity,
        "upstream_file": TEST_FILE,
        "recorded_by": "python -m oracles.llamacpp.record --test-chat",
        "about": (
            "The PEG parser cases of llama.cpp's tests/test-chat.cpp "
            "(test_template_output_peg_parsers), dumped by an instrumented copy as the test "
            "runs them: the inputs, the model output (`input`), the expected message "
            "(`expect`; the test compares contents stripped of surrounding whitespace and "
            "arguments as JSON values), the library's own non-partial parse (`actual`), the "
            "test's verdict, and `verified`: the answer harness's reading of the same inputs."
        ),
        "counts": counts,
        "templates": shas,
        "cases": cases,
    }
