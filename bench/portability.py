"""The portability matrix over llama.cpp's 68 templates: `python -m bench.portability [--json]`.

For every template in `../shared/upstream/llama.cpp/templates` and every engine registered
in `app.render.engines.ENGINES` (so engines merged later are counted without changing
this script), it computes what `/api/analyze` answers in `portability`: each engine
against transformers over the page's first-visit conversation and the built-in examples
(`app/analysis/examples.py`), with the clock pinned and the recordings' BOS/EOS texts.
It renders in this process, with the sandbox's environment but not its worker limits.

Prints, per engine, how many templates render identically on every conversation, differ
on some, or raise on some (where transformers renders), then the same per conversation,
and how many templates render identically on all engines; `--json` prints every
template's outcomes too.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from app.analysis.portability_cases import REFERENCE, conversations, engine_report
from app.render.core import RenderRequest
from app.render.engines import ENGINES
from app.render.limits import DEFAULT_LIMITS
from app.state.form import SAMPLE_MESSAGES
from tests.support.shared_data import MISSING, TEMPLATES_DIR, template_files

#: The day the llama-server recordings were made (tests/test_llamacpp_engine.py).
PINNED = datetime(2026, 11, 29, 12, 0, 0)
SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}


def outcome(report: dict[str, Any]) -> str:
    """An engine's outcome for one template: raises, differs or identical."""
    found = {case["outcome"] for case in report["cases"]}
    return next((kind for kind in ("raises", "differs") if kind in found), "identical")


def matrix(paths: list[Path] | None = None) -> tuple[dict[str, dict[str, str]], Counter]:
    """{template file: {engine id: outcome}} for every template (default: llama.cpp's 68)
    and non-reference engine, and how many templates each (engine, conversation,
    outcome) counts."""
    rows: dict[str, dict[str, str]] = {}
    by_case: Counter = Counter()
    for path in template_files() if paths is None else paths:
        request = RenderRequest(
            template=path.read_text(encoding="utf-8"),
            messages=SAMPLE_MESSAGES,
            add_generation_prompt=True,
            special_tokens=SPECIAL_TOKENS,
            now=PINNED,
        )
        cases = conversations(request)
        rows[path.name] = {}
        for engine in ENGINES:
            if engine == REFERENCE:
                continue
            report = engine_report(engine, cases, DEFAULT_LIMITS)
            rows[path.name][engine] = outcome(report)
            by_case.update((engine, c["conversation"], c["outcome"]) for c in report["cases"])
    return rows, by_case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print every template's outcomes")
    args = parser.parse_args()
    if not TEMPLATES_DIR.is_dir():
        sys.exit(MISSING)
    rows, by_case = matrix()
    engines = [engine for engine in ENGINES if engine != REFERENCE]
    print(f"{len(rows)} templates; engines against {REFERENCE}: {', '.join(engines)}")
    for engine in engines:
        counts = Counter(row[engine] for row in rows.values())
        print(f"  {engine:16} identical {counts['identical']:3}  differs {counts['differs']:3}"
              f"  raises {counts['raises']:3}")  # fmt: skip
        for case in conversations(RenderRequest(template="", messages=[])):
            name = case.name
            print(f"    {name:16} identical {by_case[engine, name, 'identical']:3}"
                  f"  differs {by_case[engine, name, 'differs']:3}"
                  f"  raises {by_case[engine, name, 'raises']:3}")  # fmt: skip
    everywhere = sum(all(o == "identical" for o in row.values()) for row in rows.values())
    print(f"identical on all engines: {everywhere} of {len(rows)} templates")
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
