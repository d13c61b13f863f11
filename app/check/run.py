"""One check: the target's template through every chosen engine, in the sandbox pool the
web process uses (the same `PLAYGROUND_*` render limits), and its findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.analysis.analyze import analyze
from app.analysis.model_files import model_files
from app.analysis.portability import portability
from app.analysis.vocab_checks import TokenIds
from app.check.conversations import NAMES, standard_cases
from app.check.findings import Finding, analysis_findings, portability_findings
from app.check.prefix import prefix_findings
from app.check.round_trip import round_trip_findings
from app.check.target import Target
from app.problems import TemplateProblem
from app.render import engines
from app.render.core import RenderRequest
from app.render.pool import SandboxPool

#: The conversation the Analysis view's checks follow (several turns, reasoning in them).
ANALYSED = "reasoning"


@dataclass
class Result:
    """What the check found: each engine's row and the findings."""

    target: str
    engines: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def run_check(
    target: Target,
    pool: SandboxPool,
    only: set[str] | None = None,
    token_ids: TokenIds | None = None,
) -> Result:
    """Check `target`'s template with the engines in `only` (None: every engine);
    `token_ids` tokenizes with the source's vocabulary (`vocabulary.py`), for the
    Analysis view's checks of the special tokens against it."""
    base = RenderRequest(
        template=target.template, messages=[], special_tokens=target.special_tokens
    )
    cases = standard_cases(base)
    report = portability(base, pool, model_files(target.source), cases=cases, only=only)
    result = Result(target.name, [_engine_row(row) for row in report["engines"]])
    result.findings += portability_findings(report)
    analysed = next(case.request for case in cases if case.name == ANALYSED)
    try:
        analysis = analyze(analysed, pool, target.source, token_ids).to_json()
    except TemplateProblem as problem:
        message = f"the Analysis view's checks did not run: {problem.message}"
        result.findings.append(Finding("error", None, ANALYSED, message, "analysis", "analysis"))
    else:
        result.findings += analysis_findings(analysis, engines.REFERENCE_ENGINE, ANALYSED)
    result.findings += prefix_findings(analysed, pool, ANALYSED, only)
    not_loading = {row["engine"] for row in result.engines if row["loads"] is False}
    result.findings += round_trip_findings(base, pool, only, not_loading)
    return result


def _engine_row(row: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema's engine entry: does it load, and each conversation's outcome."""
    load = row["load"]
    outcomes = {case["conversation"]: case["outcome"] for case in row["cases"]}
    return {
        "engine": row["id"],
        "name": row["name"],
        "version": row["version"],
        "loads": None if load is None else load["ok"],
        "conversations": [
            {"conversation": name, "outcome": outcomes.get(name, "not-run")} for name in NAMES
        ],
    }
