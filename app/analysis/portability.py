"""The portability report: how each engine renders this template over a set of conversations.

The same template gives different prompts in different runtimes (docs/engines/README.md). For
the current conversation and the built-in examples (`examples.py`), every registered
engine renders the template and is compared with transformers, the reference: each case
renders identically, renders differently (where, with both sides of the first
difference), or raises (the error and its template line) where transformers renders.

Cost: engines x conversations renders. Each engine other than the reference is one worker
task (`portability_cases.engine_report`), which renders the reference too and sends back
only the outcomes: a slow engine spends its own CPU allowance (`PLAYGROUND_CPU_SECONDS`),
not the others', and no prompt crosses back. An engine whose task runs out of its limits
is reported as raising that limit, and the engines after it are not run: a template that
loops, or writes without end, costs about one allowance per report, not one per engine.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from app.analysis.portability_cases import REFERENCE, Conversation, conversations, engine_report
from app.problems import LOAD_ERROR, TemplateProblem
from app.render import engines
from app.render.core import ModelFiles, RenderRequest
from app.render.pool import SandboxPool


def _row(engine: dict[str, str], report: dict[str, Any]) -> dict[str, Any]:
    """One engine's line of the report: its counts, its outcome and its first findings."""
    counts = {kind: 0 for kind in ("identical", "differs", "raises", "renders")}
    for case in report["cases"]:
        counts[case["outcome"]] += 1
    if engine["id"] == REFERENCE:
        outcome = "reference"
    elif report["cases"] == [] and report["first_error"]["type"] == NOT_MEASURED:
        outcome = "not-measured"  # an engine before it ran out of a limit
    elif report["cases"] == []:
        outcome = "raises"  # its task ran out of its limits
    else:
        outcome = next(
            k for k in ("raises", "differs", "identical") if counts[k] or k == "identical"
        )
    return {
        **engine,
        "outcome": outcome,
        "load": _load(engine["id"], report),
        "request_failures": _request_failures(engine["id"], report),
        "identical": counts["identical"],
        "different": counts["differs"],
        "raised": counts["raises"],
        "cases": report["cases"],
        "first_difference": report["first_difference"],
        "first_error": report["first_error"],
    }


def _load(engine_id: str, report: dict[str, Any]) -> dict[str, Any] | None:
    """For an engine whose program checks templates at load: whether it loads this one,
    and if not why (`{"ok", "message", "line", "column"}`); None for the others."""
    if not engines.get_engine(engine_id).info.checks_at_load:
        return None
    error = report.get("load_error") or report["first_error"]
    if error and error.get("type") == LOAD_ERROR:
        where = {"line": error.get("line"), "column": error.get("column")}
        return {"ok": False, "message": error["message"], **where}
    return {"ok": True, "message": None, "line": None, "column": None}


def _request_failures(engine_id: str, report: dict[str, Any]) -> list[str]:
    """For an engine whose program loads this template: the conversations its requests
    then fail on, where the reference fails too (a cell marks only where it does not);
    none for the other engines."""
    load = _load(engine_id, report)
    return report.get("failures", []) if load is not None and load["ok"] else []


def _task_failed(problem: TemplateProblem) -> dict[str, Any]:
    error = {"conversation": None, **problem.to_json()}
    return {"cases": [], "first_difference": None, "first_error": error}


#: The error type of an engine the report did not run.
NOT_MEASURED = "NotMeasured"


def _not_run(engine_name: str) -> TemplateProblem:
    return TemplateProblem(
        NOT_MEASURED,
        f"Not rendered: {engine_name} ran out of a limit with this template, and the report "
        "stops there rather than spend an allowance per engine.",
    )


def portability(
    request: RenderRequest,
    pool: SandboxPool,
    model: ModelFiles | None = None,
    *,
    cases: list[Conversation] | None = None,
    only: Collection[str] | None = None,
) -> dict[str, Any]:
    """Every engine's outcome for `request`'s template over the report's conversations.

    One worker task per engine other than the reference; the reference's row comes from
    the first of them that finished (none when it is the only engine). An engine whose
    program would not load the source's `model` is not run: its row says why
    (`Engine.model_refusal`). `cases` replaces the report's conversations (`./playground
    check` brings its own), and `only` keeps the rows of those engines and the reference.
    """
    cases = conversations(request) if cases is None else cases
    chosen = [e for e in engines.ENGINES if only is None or e in only or e == REFERENCE]
    reports: dict[str, dict[str, Any]] = {}
    stopped_by: str | None = None
    reference_error = None
    for engine in chosen:
        if engine == REFERENCE:
            continue
        if stopped_by is not None:
            reports[engine] = _task_failed(_not_run(stopped_by))
            continue
        refusal = engines.get_engine(engine).model_refusal(model) if model else None
        if refusal:
            reports[engine] = _task_failed(TemplateProblem(LOAD_ERROR, refusal))
            continue
        try:
            report = pool.run(engine_report, engine, cases)
        except TemplateProblem as problem:
            report = _task_failed(problem)
        if report.get("reference_ran_out"):
            # The reference itself ran out: no engine can be compared with it.
            reference_error = report["reference_ran_out"]
            stopped_by = engines.get_engine(REFERENCE).info.name
            report = _task_failed(_not_run(stopped_by))
        elif not report["cases"] and report["first_error"] and report["first_error"].get("limit"):
            stopped_by = engines.get_engine(engine).info.name
        reports[engine] = report
    finished = [r["reference"] for r in reports.values() if "reference" in r]
    reference = finished[0] if finished else {"cases": [], "first_difference": None}
    reports[REFERENCE] = {
        **reference,
        "first_error": reference_error or reference.get("first_error"),
    }
    rows = [
        _row(info, reports[info["id"]]) for info in engines.engine_list() if info["id"] in chosen
    ]
    others = [row for row in rows if row["id"] != REFERENCE]
    return {
        "reference": REFERENCE,
        "conversations": [case.name for case in cases],
        "engines": rows,
        "identical_everywhere": all(row["outcome"] == "identical" for row in others),
    }
