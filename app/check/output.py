"""The check's report as text (one line per finding, grouped by engine), JSON (the
schema in docs/check.md) or JUnit XML (one test case per engine and check)."""

from __future__ import annotations

import json
from itertools import groupby
from xml.etree import ElementTree as ET

from app.check.findings import SEVERITIES, Finding
from app.check.run import Result

#: The checks a JUnit file has a test case for, for every engine.
CHECKS = ("load", "render", "differs", "round-trip", "prefix", "analysis")
#: The suite's name for findings about the template itself (no engine).
TEMPLATE = "template"


def as_text(result: Result) -> str:
    """One line per finding, grouped by engine, worst first; accepted ones last."""
    lines = [f"{result.target}: {_counts(result.findings)}"]
    findings = sorted(result.findings, key=lambda f: f.engine or "")
    for engine, group in groupby(findings, key=lambda f: f.engine or TEMPLATE):
        lines.append(f"\n{engine}")
        for finding in sorted(group, key=lambda f: (f.accepted is not None, _rank(f))):
            where = f" [{finding.conversation}]" if finding.conversation else ""
            mark = f"accepted ({finding.accepted}): " if finding.accepted else ""
            lines.append(f"  {finding.severity:<7}{where} {mark}{finding.message}")
            if finding.share:
                lines.append(f"           open it: {finding.share}")
    return "\n".join(lines) + "\n"


def _rank(finding: Finding) -> int:
    """Its place among the severities, worst first."""
    return SEVERITIES.index(finding.severity)


def _counts(findings: list[Finding]) -> str:
    """How many findings of each severity are not accepted, and how many are."""
    live = [f for f in findings if f.accepted is None]
    said = [f"{sum(f.severity == s for f in live)} {s}s" for s in SEVERITIES]
    accepted = len(findings) - len(live)
    return ", ".join(said) + (f", {accepted} accepted" if accepted else "")


def as_json(result: Result) -> str:
    """The documented schema: target, engines (loads, conversations), findings."""
    document = {
        "target": result.target,
        "engines": result.engines,
        "findings": [
            {
                "severity": f.severity,
                "engine": f.engine,
                "conversation": f.conversation,
                "message": f.message,
                "check": f.check,
                "id": f.id,
                "accepted": f.accepted,
                "share": f.share,
            }
            for f in result.findings
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def as_junit(result: Result, fail_on: str) -> str:
    """One test suite per engine, one test case per check; a finding at `fail_on` or
    worse (and not accepted) fails its case, the others are written to its output."""
    root = ET.Element("testsuites", name=f"playground check {result.target}")
    names = [row["engine"] for row in result.engines] + [TEMPLATE]
    worst = SEVERITIES.index(fail_on)
    for engine in names:
        suite = ET.SubElement(root, "testsuite", name=engine)
        failures = 0
        for check in CHECKS:
            case = ET.SubElement(suite, "testcase", classname=engine, name=check)
            found = [
                f for f in result.findings if (f.engine or TEMPLATE) == engine and f.check == check
            ]
            failing = [f for f in found if f.accepted is None and _rank(f) <= worst]
            if failing:
                failures += 1
                failure = ET.SubElement(case, "failure", message=failing[0].message[:200])
                failure.text = "\n".join(_line(f) for f in failing)
            if found:
                ET.SubElement(case, "system-out").text = "\n".join(_line(f) for f in found)
        suite.set("tests", str(len(CHECKS)))
        suite.set("failures", str(failures))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _line(finding: Finding) -> str:
    """One finding as a line of a JUnit case."""
    where = f"[{finding.conversation}] " if finding.conversation else ""
    return f"{finding.severity}: {where}{finding.message}"
