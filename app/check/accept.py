"""Known findings a repository accepts, with a reason: `.playground-check.toml` in the
checked folder (or the target's folder), or the file `--config` names.

    [[accept]]
    id = "load:edge-llm"          # a finding's id, as --format json shows it
    reason = "Edge-LLM is not a runtime we ship for"
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

from app.check.findings import Finding
from app.check.target import TargetError

#: The file looked for beside (or in) the target.
FILE_NAME = ".playground-check.toml"


def config_path(target: str, given: str | None) -> Path | None:
    """The accept file in force: the one given, else one in the target's folder."""
    if given is not None:
        return Path(given)
    path = Path(target)
    folder = path if path.is_dir() else path.parent
    found = folder / FILE_NAME
    return found if path.exists() and found.is_file() else None


def read_accepted(path: Path) -> dict[str, str]:
    """Each accepted finding id and its reason; raises TargetError with a sentence."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise TargetError(f"{path} cannot be read: {error}.") from None
    except tomllib.TOMLDecodeError as error:
        raise TargetError(f"{path} is not valid TOML: {error}.") from None
    accepted = {}
    for number, entry in enumerate(data.get("accept", []), 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise TargetError(f"{path}: accept entry {number} has no id (a string).")
        if not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            raise TargetError(f"{path}: accept entry {number} ({entry['id']}) gives no reason.")
        accepted[entry["id"]] = entry["reason"].strip()
    return accepted


def apply(findings: list[Finding], accepted: dict[str, str]) -> list[Finding]:
    """The findings, those the file accepts marked with its reason."""
    return [replace(f, accepted=accepted[f.id]) if f.id in accepted else f for f in findings]
