"""Record what vLLM's own answer parsers return: `python -m oracles.vllm.record_answers`.

The modules of `app.render.engines.vllm.answers` reproduce vLLM 0.33.0's tool and
reasoning parsers; this runs vLLM's real parser classes on the same texts, so the suite
checks the modules against vLLM and not against our reading of its code. It uses the
side environment of `oracles/vllm/record.py` (`--venv`, made with
`python -m oracles.vllm.record --setup --venv DIR`) and runs `oracles/vllm/parse.py` there.

`--parser` names what to record, one or more times: `tool:NAME`, `reasoning:NAME`, or
`serve:TOOL+REASONING` (the whole non-streaming chat answer of a server started with those
two flags, `none` for either); `--all` records every parser the package registers and the
pair suggested for each shared template. Each is written to
`oracles/vllm/answers/<kind>_<name>.json`. Its cases are, by name prefix:
- `vllm_test/`: the model outputs of vLLM's own test for the parser
  (`oracles/vllm/parser_cases/<kind>_<name>.json`);
- `menu/`: the Completion menu's texts (`tests/support/answers/completions.json`) for the
  shared templates whose suggested parser this is;
- `malformed/`: broken variants (`oracles/vllm/answer_cases.py`);
- `extra/` or any other: the cases of `--cases FILE` (a JSON list of cases), and every case
  an existing fixture holds, kept and recorded again.
A case is `{"name", "text", "tools", "kwargs"}` (+ `"tool_choice"`, `"no_reasoning_parser"`,
`"special_tokens"`, `"prompt"`: see `oracles/vllm/parse.py`). Recording a tool parser also
writes into its vLLM test cases whether vLLM 0.33.0 meets each expectation
(`holds_in_vllm_0_33_0`). `--out DIR` writes the fixtures elsewhere (a dry run).

vLLM 0.33.0's parser modules import `ijson` and `mistral_common` (and through it
`jsonschema`, `referencing`, `rpds-py`, `jsonschema-specifications`, `pycountry`,
`pydantic-extra-types`): `oracles/vllm/requirements.txt` pins them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from oracles.vllm.answer_cases import MALFORMED, TOKENS, serve_cases, suggest_for_templates
from oracles.vllm.answer_cases_serve import MALFORMED_B, SERVE_EXTRA
from oracles.vllm.expectations import meets
from tests.support import REPO

CHILD = Path(__file__).with_name("parse.py")
FIXTURES = REPO / "oracles" / "vllm" / "answers"
PARSER_CASES = REPO / "oracles" / "vllm" / "parser_cases"
COMPLETIONS = REPO / "tests" / "support" / "answers" / "completions.json"

ABOUT = (
    "What vLLM's own parser class returns for each case (non-streaming extract_tool_calls / "
    "extract_reasoning; serve: the composed parser's parse and the chat message fields), "
    "recorded by running it. The tokenizer holds only the parsers' marker tokens and no "
    "other special tokens; the request carries the case's tools and chat_template_kwargs. "
    "A tool call's id is null where vLLM makes a random one."
)


def fixture_path(parser: str, folder: Path = FIXTURES) -> Path:
    """Where the fixture of `parser` ("tool:hermes", "serve:hermes+qwen3") lives."""
    kind, name = parser.split(":", 1)
    return folder / f"{kind}_{name.replace('-', '_')}.json"


def _case(name: str, case: dict[str, Any]) -> dict[str, Any]:
    out = {
        "name": name,
        "text": case["text"],
        "tools": case.get("tools"),
        "kwargs": case.get("kwargs") or {},
    }
    for key in ("tool_choice", "no_reasoning_parser", "special_tokens", "prompt", "keep_ids"):
        if case.get(key) is not None:
            out[key] = case[key]
    return out


def menu_cases(parser: str) -> list[dict[str, Any]]:
    """The menu's completions for the shared templates whose suggestion names `parser`."""
    if not COMPLETIONS.exists():
        return []
    menu = json.loads(COMPLETIONS.read_text(encoding="utf-8"))
    kind, name = parser.split(":", 1)
    wanted = set()
    for template, (tool, reasoning) in suggest_for_templates().items():
        if (kind == "tool" and tool == name) or (kind == "reasoning" and reasoning == name):
            wanted.add(template)
    return [
        _case(f"menu/{e['template'].removesuffix('.jinja')}/{e['kind']}", {
            "text": e["completion"], "tools": menu["tools"]
        })
        for e in menu["entries"]
        if e["template"].removesuffix(".jinja") in wanted and "completion" in e
    ]  # fmt: skip


def cases_for(parser: str, extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every case to record for `parser`, in a stable order, each name once."""
    kind, name = parser.split(":", 1)
    found: dict[str, dict[str, Any]] = {}
    if kind == "serve":
        for case in serve_cases(name) + SERVE_EXTRA.get(name, []):
            found[case["name"]] = _case(case["name"], case)
    tests = PARSER_CASES / f"{kind}_{name.replace('-', '_')}.json"
    if tests.exists():
        for case in json.loads(tests.read_text(encoding="utf-8"))["cases"]:
            found[f"vllm_test/{case['name']}"] = _case(f"vllm_test/{case['name']}", case)
    if kind != "serve":
        for case in menu_cases(parser):
            found[case["name"]] = case
    for label, case in (MALFORMED.get(parser, {}) | MALFORMED_B.get(parser, {})).items():
        found[f"malformed/{label}"] = _case(f"malformed/{label}", case)
    for case in extra:
        found.setdefault(case["name"], _case(case["name"], case))
    if (old := fixture_path(parser)).exists():
        for case in json.loads(old.read_text(encoding="utf-8"))["cases"]:
            found.setdefault(case["name"], _case(case["name"], case))
    return list(found.values())


def run_vllm(venv: Path, jobs: list[dict[str, Any]]) -> tuple[dict, dict[tuple, dict]]:
    """vLLM's answers for the jobs: its versions, and each answer by (parser, case name)."""
    finished = subprocess.run(
        [str(venv / "bin" / "python"), str(CHILD)],
        input=json.dumps({"tokens": list(TOKENS), "jobs": jobs}),
        capture_output=True,
        text=True,
        check=False,
    )
    if finished.returncode != 0:
        sys.exit(f"vLLM's parsers failed:\n{finished.stderr[-3000:]}")
    lines = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    answers = {(line["parser"], line["name"]): line["vllm"] for line in lines[1:]}
    return lines[0]["versions"], answers


def record_holds(parser: str, answers: dict[tuple, dict]) -> None:
    """Write into the parser's vLLM test cases whether vLLM 0.33.0 meets each one."""
    kind, name = parser.split(":", 1)
    path = PARSER_CASES / f"{kind}_{name.replace('-', '_')}.json"
    if kind == "serve" or not path.exists():
        return
    doc = json.loads(path.read_text(encoding="utf-8"))
    for case in doc["cases"]:
        answer = answers.get((parser, f"vllm_test/{case['name']}"))
        if answer is None:
            continue
        if kind == "tool":
            case["holds_in_vllm_0_33_0"] = meets(case["expect"], answer)
        else:  # a reasoning test checks both fields
            case["holds_in_vllm_0_33_0"] = all(
                answer.get(field) == case["expect"][field] for field in ("reasoning", "content")
            )
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def all_parsers() -> list[str]:
    """Every registered parser, and the serve pairs the shared templates are suggested."""
    from app.render.engines.vllm.answers.registry import REASONING_PARSERS, TOOL_PARSERS

    names = [f"tool:{n}" for n in TOOL_PARSERS] + [f"reasoning:{n}" for n in REASONING_PARSERS]
    pairs = sorted({f"serve:{t}+{r}" for t, r in suggest_for_templates().values()} | {
        f"serve:{pair}" for pair in SERVE_EXTRA
    })  # fmt: skip
    return names + pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=REPO / ".vllm-recorder")
    parser.add_argument("--parser", action="append", default=[], help="tool:NAME, ...")
    parser.add_argument("--all", action="store_true", help="every registered parser")
    parser.add_argument("--cases", type=Path, help="a JSON list of extra cases")
    parser.add_argument("--out", type=Path, default=FIXTURES, help="where to write")
    args = parser.parse_args()
    wanted = args.parser + (all_parsers() if args.all else [])
    if not wanted:
        parser.error("name at least one --parser, or --all")
    extra = json.loads(args.cases.read_text(encoding="utf-8")) if args.cases else []
    jobs = [{"parser": p, "cases": cases_for(p, extra)} for p in dict.fromkeys(wanted)]
    versions, answers = run_vllm(args.venv, jobs)
    for job in jobs:
        cases = [{**case, "vllm": answers[(job["parser"], case["name"])]} for case in job["cases"]]
        fixture = {
            "parser": job["parser"],
            "vllm": versions["vllm"],
            "versions": versions,
            "about": ABOUT,
            "cases": cases,
        }
        path = fixture_path(job["parser"], args.out)
        path.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        if args.out == FIXTURES:
            record_holds(job["parser"], answers)
        raised = sum("exception" in case["vllm"] for case in cases)
        print(f"{path}: {len(cases)} cases ({raised} raised)")


if __name__ == "__main__":
    main()
