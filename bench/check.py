"""`./playground check` over every shared template: `python -m bench.check [--quick]`.

For each template in `../shared/upstream/llama.cpp/templates` (or PLAYGROUND_TEST_SHARED),
the whole check with every registered engine (engines merged later are counted without
changing this script), then, unless `--quick`, the check with each engine alone (the
reference runs beside it: its renders and the Analysis view's are in every figure). One
sandbox pool with the default limits serves every run, as one CI job's would; the pool's
start-up (once per command) is timed apart. Prints the time per template and per engine,
the slowest, and any crash; the goal is every template under 60 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import traceback

from app.check.run import run_check
from app.check.target import read_target
from app.config import load_settings, render_limits, source_limits
from app.render.engines import ENGINES
from app.render.pool import SandboxPool
from tests.support.shared_data import MISSING, TEMPLATES_DIR, template_files

#: The goal per template.
GOAL_SECONDS = 60.0


def _timed(pool: SandboxPool, path: str, only: set[str] | None) -> tuple[float, int]:
    """Seconds of one check, and its number of errors."""
    settings = load_settings()
    start = time.perf_counter()
    result = run_check(read_target(path, source_limits(settings)), pool, only)
    return time.perf_counter() - start, sum(f.severity == "error" for f in result.findings)


def main() -> int:
    """Run the bench; 1 if a check crashed or a template missed the goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the whole check only")
    parser.add_argument("--limit", type=int, help="the first N templates only")
    arguments = parser.parse_args()
    if not TEMPLATES_DIR.is_dir():
        sys.exit(MISSING)
    start = time.perf_counter()
    pool = SandboxPool(render_limits(load_settings()), workers=2)
    pool.run(id)  # the workers started (a task: id of the limits it is given)
    print(f"sandbox pool start: {time.perf_counter() - start:.2f} s")
    totals: dict[str, float] = {}
    by_engine: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    crashed = []
    try:
        for path in template_files()[: arguments.limit]:
            try:
                seconds, errors = _timed(pool, str(path), None)
                totals[path.name] = seconds
                line = f"{seconds:6.2f} s  {errors:2} errors  {path.name}"
                if not arguments.quick:
                    for engine in ENGINES:
                        by_engine[engine].append(_timed(pool, str(path), {engine})[0])
                    line += "  " + " ".join(f"{e} {by_engine[e][-1]:.2f}" for e in ENGINES)
                print(line, flush=True)
            except Exception:  # a crash is the bench's finding: print it and go on
                crashed.append(path.name)
                traceback.print_exc()
    finally:
        pool.close()
    return _summary(totals, by_engine, crashed)


def _summary(
    totals: dict[str, float], by_engine: dict[str, list[float]], crashed: list[str]
) -> int:
    """Print the figures; 1 on a crash or a template over the goal."""
    slow = [name for name, seconds in totals.items() if seconds > GOAL_SECONDS]
    worst = max(totals, key=totals.__getitem__)
    median = statistics.median(totals.values())
    total = sum(totals.values())
    print(f"\n{len(totals)} templates, median {median:.2f} s, "
          f"slowest {totals[worst]:.2f} s ({worst}), total {total:.1f} s")  # fmt: skip
    for engine, figures in by_engine.items():
        if figures:
            print(f"  {engine:<16} alone: median {statistics.median(figures):.2f} s, "
                  f"slowest {max(figures):.2f} s")  # fmt: skip
    print(f"crashed: {crashed or 'none'}; over {GOAL_SECONDS:.0f} s: {slow or 'none'}")
    return 1 if crashed or slow else 0


if __name__ == "__main__":
    sys.exit(main())
