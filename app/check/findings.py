"""The check's findings, read off what the playground computes: the portability report's
rows (loads, refusals, differences from the reference) and the Analysis view's
diagnostics and prefix stability."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from app.check.conversations import OBJECT_ARGUMENTS
from app.render import engines

#: How bad a finding is, worst first; `--fail-on` names one of the first two.
SEVERITIES = ("error", "warning", "note")
#: The Analysis view's severities as the check's.
_FROM_DIAGNOSTIC = {"error": "error", "warning": "warning", "info": "note"}


@dataclass(frozen=True)
class Finding:
    """One line of the report (the JSON schema's `findings` entry, plus `check` and `id`
    for JUnit and the accept file)."""

    severity: str
    engine: str | None
    conversation: str | None
    message: str
    #: Which check found it: load, render, differs, round-trip, prefix, analysis.
    check: str
    #: A stable name for the accept file: the check and what it is about.
    id: str
    #: Why the accept file accepts it (None: not accepted).
    accepted: str | None = None
    #: Its share link on a running playground (`--share`), else None.
    share: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Its fields as a JSON object."""
        return asdict(self)


def _shown(text: str) -> str:
    """Text as a report quotes it: escapes visible, "(end)" for nothing."""
    return repr(text)[1:-1] or "(end)"


def portability_findings(report: dict[str, Any]) -> list[Finding]:
    """Every engine's load failure, refusals and first difference from the reference."""
    found: list[Finding] = []
    reference = report["reference"]
    rows = report["engines"]
    cases = next((r["cases"] for r in rows if r["id"] == reference), [])
    refused = {case["conversation"] for case in cases if case["outcome"] == "raises"}
    for row in report["engines"]:
        engine, error = row["id"], row["first_error"]
        load = row["load"]
        if load is not None and not load["ok"]:
            where = f" (line {load['line']})" if load.get("line") else ""
            message = f"does not load the template{where}: {load['message']}"
            found.append(Finding("error", engine, None, message, "load", f"load:{engine}"))
            continue
        if row["outcome"] == "not-measured":
            found.append(
                Finding("note", engine, None, error["message"], "render", f"render:{engine}")
            )
            continue
        if engine == reference:
            found += _reference_findings(row, error)
            continue
        found += _case_findings(row, reference, refused)
    return found


#: What a template's own `raise_exception` raises: a refusal it means (a note), not a bug.
REFUSAL = "TemplateError"


def _reference_findings(row: dict[str, Any], error: dict[str, Any] | None) -> list[Finding]:
    """Each conversation the reference raises on: the template's own refusal (a note),
    or an error."""
    found = []
    for case in row["cases"]:
        if case["outcome"] != "raises":
            continue
        name = case["conversation"]
        said = error["message"] if error and error["conversation"] == name else "(as above)"
        if case.get("type") == REFUSAL:
            message = f"the template refuses this conversation: {said}"
            found.append(_case_finding("note", row, name, message, "render"))
        else:
            found.append(_case_finding("error", row, name, f"raises: {said}", "render"))
    return found


def _case_findings(row: dict[str, Any], reference: str, refused: set[str]) -> list[Finding]:
    """An engine's refusals and differences, one finding per conversation (`refused`:
    the conversations the reference raises on)."""
    found = []
    error, difference = row["first_error"], row["first_difference"]
    for case in row["cases"]:
        name = case["conversation"]
        if case["outcome"] == "raises":
            said = error["message"] if error and error["conversation"] == name else "(as above)"
            message = f"raises where {reference} renders: {said}"
            found.append(_raises(row, name, message, case.get("type")))
        elif case["outcome"] == "differs" and name in refused:
            message = f"renders where {reference} raises"
            found.append(_case_finding("warning", row, name, message, "differs"))
        elif case["outcome"] == "differs":
            message = f"renders another prompt than {reference}"
            if difference and difference["conversation"] == name:
                message += _where(difference)
            found.append(_case_finding("warning", row, name, message, "differs"))
    for name in row["request_failures"]:
        message = f"refuses the request, as {reference} does"
        found.append(_case_finding("note", row, name, message, "render"))
    return found


#: What an engine raises for a request its program's server refuses, whatever the template.
SERVER_REFUSAL = "InvalidRequest"


def _raises(row: dict[str, Any], name: str, message: str, kind: str | None) -> Finding:
    """An engine's refusal (`kind`: its error's type): an error; a warning where its
    server refuses the request by an API rule; a note where an OpenAI-compatible server
    refuses arguments sent as objects (its clients send JSON text)."""
    server = engines.get_engine(row["id"]).info.openai_server
    if server and name in OBJECT_ARGUMENTS:
        message += " (its API takes a call's arguments only as JSON text)"
        return _case_finding("note", row, name, message, "render")
    if kind == SERVER_REFUSAL:
        message += " (a rule of its server's API, whatever the template)"
        return _case_finding("warning", row, name, message, "render")
    return _case_finding("error", row, name, message, "render")


def _where(difference: dict[str, Any]) -> str:
    """The first differing characters, the template line, and the engine's own words."""
    line = f", template line {difference['line']}" if difference.get("line") else ""
    said = f" at character {difference['position']}{line}: "
    said += f"expected '{_shown(difference['reference'][:40])}', "
    said += f"got '{_shown(difference['engine'][:40])}'"
    rewrites = difference.get("rewrites") or []
    return said + ("" if not rewrites else " (the engine says: " + " ".join(rewrites) + ")")


def _case_finding(
    severity: str, row: dict[str, Any], case: str | None, message: str, check: str
) -> Finding:
    """A finding about one engine's conversation, named by check, engine and conversation."""
    engine = row["id"]
    return Finding(severity, engine, case, message, check, f"{check}:{engine}:{case}")


def analysis_findings(analysis: dict[str, Any], engine: str, conversation: str) -> list[Finding]:
    """The Analysis view's diagnostics and prefix stability over `conversation`, as
    `engine` (the engine the analysis probes with) renders them."""
    found = [
        Finding(
            _FROM_DIAGNOSTIC.get(d["severity"], "note"),
            None,
            None,
            d["message"] + (f" (template line {d['line']})" if d.get("line") else ""),
            "analysis",
            f"analysis:{d['id']}",
        )
        for d in analysis["diagnostics"]
    ]
    for pair in analysis["prefix_stability"]:
        found += _prefix_findings(pair, engine, conversation)
    return found


def _prefix_findings(pair: dict[str, Any], engine: str, conversation: str) -> list[Finding]:
    """Whether request k+1 starts with request k, and with request k and its answer."""
    found = []
    if pair["answer_stays_prefix"] is False:
        message = (
            f"request {pair['to_turn']} does not start with request {pair['from_turn']} and "
            "its answer as the template writes it (the server's cache of the answer is lost)"
        )
        name = f"prefix:answer:{pair['from_turn']}"
        found.append(Finding("warning", engine, conversation, message, "prefix", name))
    if pair["first_difference"] is not None:
        message = (
            f"request {pair['to_turn']} does not start with request {pair['from_turn']}: "
            f"they part at character {pair['first_difference']} of {pair['request_chars']}, "
            f"'{_shown(pair['after_left'])}' then '{_shown(pair['after_right'])}'"
        )
        name = f"prefix:{pair['from_turn']}"
        found.append(Finding("warning", engine, conversation, message, "prefix", name))
    return found
