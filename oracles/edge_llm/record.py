"""Record what TensorRT Edge-LLM's own answer parser returns:
`python -m oracles.edge_llm.record --source DIR`.

`app.render.engines.edge_llm.answers` reproduces the parser of Edge-LLM's OpenAI server
(`experimental/server/parsing/tool_calling.py` and `reasoning.py`); this runs Edge-LLM's
real `parse_assistant_output` on the same texts, so the suite checks ours against
Edge-LLM and not against our reading of its code. DIR is a checkout of
guswns531/TensorRT-Edge-LLM at 83f5f76871d71fbd2682c903eac285621d9077f7 (or any folder
holding its `experimental/server/parsing/`): only those two files are loaded (they need
Python's standard library alone), nothing of it is kept here.

Its cases: Edge-LLM's own test inputs (`oracles/edge_llm/parser_cases.json`, whose
`holds_in_edge_llm` it writes: whether Edge-LLM itself meets each expectation), the
Completion menu's texts (`tests/support/answers/completions.json`, each read with the
menu's tools and thinking off, with them and thinking on, and without tools), and the
texts of `oracles/edge_llm/answer_cases.py`. Each result is the reading's content,
reasoning and calls (an id only where the text gave one: Edge-LLM makes the others up at
random), or the exception the parser raises. Written to
`oracles/edge_llm/answers.json` (`--out FILE` elsewhere).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

from oracles.edge_llm.answer_cases import TOOLS, crafted_cases
from oracles.edge_llm.expectations import meets
from tests.support import REPO

PARSER_CASES = REPO / "oracles" / "edge_llm" / "parser_cases.json"
COMPLETIONS = REPO / "tests" / "support" / "answers" / "completions.json"
FIXTURE = REPO / "oracles" / "edge_llm" / "answers.json"
PACKAGE = "edgellm_parsing"
GENERATED_ID = re.compile(r"call_[0-9a-f]{24}")
ABOUT = (
    "What Edge-LLM's own parse_assistant_output (experimental/server/parsing at 83f5f76) "
    "returns for each case, recorded by running it: content, reasoning and calls "
    "(id null where Edge-LLM makes a random one), or the exception it raises. "
    "`reasoning_parser` is the parser in force (the flag's value when the request sets "
    "enable_thinking, else none); `model` the checkpoint folder's name, by which auto "
    "picks. A `menu` case reads the Completion menu's text of that template and kind."
)


def load(source: Path) -> types.ModuleType:
    """Edge-LLM's tool_calling module, loaded from `source` without its packages'
    `__init__` files (which import its runtime)."""
    folder = source / "experimental" / "server" / "parsing"
    package = types.ModuleType(PACKAGE)
    package.__path__ = [str(folder)]
    sys.modules[PACKAGE] = package
    for name in ("reasoning", "tool_calling"):
        spec = importlib.util.spec_from_file_location(f"{PACKAGE}.{name}", folder / f"{name}.py")
        assert spec is not None and spec.loader is not None, folder
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules[f"{PACKAGE}.tool_calling"]


def run(edge: types.ModuleType, case: dict[str, Any], text: str, root: Path) -> dict[str, Any]:
    """Edge-LLM's reading of `text` with the case's request and parsers."""
    tools = TOOLS[case["tools"]] if isinstance(case["tools"], str) else case["tools"]
    question = [{"role": "user", "content": "q"}]
    config = edge.validate_tool_request(question, tools, case.get("tool_choice"), True)
    model_dir = root / case["model"]
    model_dir.mkdir(exist_ok=True)
    try:
        parsed = edge.parse_assistant_output(
            text, config, str(model_dir), "auto", case["reasoning_parser"]
        )
    except Exception as error:  # what it raises is the record
        return {"raises": {"type": type(error).__name__, "message": str(error)}}
    calls = [
        {
            "name": call.name,
            "arguments": call.arguments,
            "id": None if GENERATED_ID.fullmatch(call.id) else call.id,
        }
        for call in parsed.tool_calls
    ]
    return {"content": parsed.content, "reasoning": parsed.reasoning, "calls": calls}


def menu_cases() -> list[dict[str, Any]]:
    """The menu's texts, each in three requests."""
    entries = json.loads(COMPLETIONS.read_text("utf-8"))["entries"]
    cases = []
    for entry in entries:
        if "completion" not in entry:
            continue
        model = entry["template"].removesuffix(".jinja")
        where = {"template": entry["template"], "kind": entry["kind"]}
        for label, tools, parser in (
            ("tools", "menu", "none"),
            ("tools+thinking", "menu", "auto"),
            ("thinking", None, "auto"),
        ):
            cases.append(
                {"name": f"menu/{model}/{entry['kind']}/{label}", "menu": where, "tools": tools,
                 "tool_choice": None, "model": model, "reasoning_parser": parser}
            )  # fmt: skip
    return cases


def menu_text(case: dict[str, Any], entries: dict[tuple[str, str], str]) -> str:
    return entries[(case["menu"]["template"], case["menu"]["kind"])]


def record(edge: types.ModuleType, root: Path) -> dict[str, Any]:
    own = json.loads(PARSER_CASES.read_text("utf-8"))
    entries = {
        (e["template"], e["kind"]): e["completion"]
        for e in json.loads(COMPLETIONS.read_text("utf-8"))["entries"]
        if "completion" in e
    }
    for case in own["cases"]:
        result = run(edge, {**case, "tools": own["tools"][case["tools"]]}, case["text"], root)
        case["holds_in_edge_llm"] = meets(case["expect"], result)
    PARSER_CASES.write_text(json.dumps(own, indent=1, ensure_ascii=False) + "\n", "utf-8")
    corpus = own["corpus"]
    cases = [
        {"name": f"corpus/{index}", "text": text, "tools": corpus["tools"], "tool_choice": None,
         "model": "nonexistent", "reasoning_parser": "none"}
        for index, text in enumerate(corpus["texts"])
    ]  # fmt: skip
    cases += crafted_cases() + menu_cases()
    tools = {**TOOLS, **own["tools"]}
    for case in cases:
        named = {**case, "tools": tools[case["tools"]] if case["tools"] else None}
        text = menu_text(case, entries) if "menu" in case else case["text"]
        case["result"] = run(edge, named, text, root)
    models = sorted({case["model"] for case in cases})
    auto = {}
    for model in models:
        folder = str(root / model)
        reasoning = sys.modules[f"{PACKAGE}.reasoning"].REASONING_PARSERS
        auto[model] = {
            "tool": edge._parser_name_for_model(folder),
            "reasoning": reasoning._for_model(folder),
        }
    return {
        "about": ABOUT,
        "source": own["source"],
        "python": sys.version.split()[0],
        "tools": tools,
        "auto": auto,
        "cases": cases,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="an Edge-LLM checkout")
    parser.add_argument("--out", type=Path, default=FIXTURE)
    args = parser.parse_args()
    edge = load(args.source)
    with tempfile.TemporaryDirectory() as root:
        recorded = record(edge, Path(root))
    args.out.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", "utf-8")
    raised = sum("raises" in case["result"] for case in recorded["cases"])
    print(f"{len(recorded['cases'])} cases recorded ({raised} raise) to {args.out}")


if __name__ == "__main__":
    main()
