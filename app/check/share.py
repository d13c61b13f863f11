"""`--share URL`: a share link per finding, made by a running playground's `/api/shares`,
so a finding in CI opens in the page with the same template and conversation (the Diff
view against the reference for a difference, else the Analysis view, with the engine)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import replace
from typing import Any

from app.answers.menu import EXAMPLE_TOOLS
from app.check.conversations import STANDARD
from app.check.findings import Finding
from app.check.round_trip import KINDS, ROUND_TRIP_QUESTION
from app.check.run import ANALYSED
from app.check.target import Target, TargetError
from app.render.engines import REFERENCE_ENGINE

#: Seconds to wait for the playground's answer.
TIMEOUT = 30
_BY_NAME = {case["name"]: case for case in STANDARD}
_ROUND_TRIP = {"messages": ROUND_TRIP_QUESTION, "tools": EXAMPLE_TOOLS}


def state_of(finding: Finding, target: Target) -> dict[str, Any]:
    """The playground state (`POST /api/shares` body) that shows `finding`."""
    name = finding.conversation or ANALYSED
    case = _ROUND_TRIP if name in KINDS.values() else _BY_NAME.get(name, _BY_NAME[ANALYSED])
    state: dict[str, Any] = {
        "template": target.template,
        "messages": case["messages"],
        "tools": case.get("tools"),
        "add_generation_prompt": case.get("add_generation_prompt", True),
        "continue_final_message": case.get("continue_final_message", False),
        "special_tokens": target.special_tokens,
        "tool_arguments": case.get("tool_arguments"),
        "view": "analysis",
    }
    if finding.check == "differs" and finding.engine:
        state.update(engine=REFERENCE_ENGINE, compare_engines=finding.engine, view="diff")
    elif finding.engine:
        state["engine"] = finding.engine
    return state


def shared(findings: list[Finding], target: Target, base: str) -> list[Finding]:
    """The findings, each with the link of its state on the playground at `base`; raises
    TargetError with a sentence when the playground does not answer with one."""
    links: dict[str, str] = {}
    done = []
    for finding in findings:
        body = json.dumps(state_of(finding, target), ensure_ascii=False)
        if body not in links:
            links[body] = _post(base.rstrip("/"), body)
        done.append(replace(finding, share=links[body]))
    return done


def _post(base: str, body: str) -> str:
    """The share link the playground at `base` makes for the state `body`."""
    request = urllib.request.Request(
        f"{base}/api/shares", body.encode(), {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return base + json.load(response)["url"]
    except urllib.error.HTTPError as error:
        said = error.read(2000).decode("utf-8", "replace")
        raise TargetError(f"{base}/api/shares answered {error.code}: {said}") from None
    except (urllib.error.URLError, OSError, ValueError, KeyError) as error:
        raise TargetError(f"{base}/api/shares gave no share link: {error}.") from None
