"""The page's own word beside an engine's error: which message a template tripped on.

An engine's error is shown in its own words ("'dict object' has no attribute 'content'"),
which never say which message it was reading. When the error names a missing attribute,
the messages that lack that key, or hold null there, are the likely cause: the page says
which, by number and role.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from app.problems import TemplateProblem

# Jinja's words for a missing attribute ("'dict object' has no attribute 'content'") and
# for a missing variable reached through one ("'content' is undefined").
_MISSING = re.compile(r"has no attribute '([^'\s]{1,64})'|^'([^'\s]{1,64})' is undefined")
#: How many messages the hint names before it says "and N more".
_NAMED = 5


def missing_field_hint(problem: TemplateProblem, messages: Sequence[Any]) -> str | None:
    """A sentence naming the messages whose `key` is missing or null, where `problem`
    says the template read a missing `key`; None when it says nothing of the kind or no
    message fits."""
    found = _MISSING.search(problem.message)
    if problem.type != "UndefinedError" or found is None:
        return None
    key = found.group(1) or found.group(2)
    null = [i for i, m in enumerate(messages, 1) if isinstance(m, dict) and m.get(key, 0) is None]
    absent = [i for i, m in enumerate(messages, 1) if isinstance(m, dict) and key not in m]
    if null:
        said = f'{_named(null, messages)} {_has(null)} "{key}": null'
    elif absent and len(absent) < len(messages):
        said = f'{_named(absent, messages)} {_has(absent, "no")} "{key}"'
    else:
        return None
    return f"{said}, which this template reads."


def _named(numbers: list[int], messages: Sequence[Any]) -> str:
    """ "Message 2 (assistant)", "Messages 2 (assistant) and 4 (tool)", ..."""
    parts = [f"{n} ({_role(messages[n - 1])})" for n in numbers[:_NAMED]]
    if len(numbers) > _NAMED:
        parts.append(f"{len(numbers) - _NAMED} more")
    said = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return ("Message " if len(numbers) == 1 else "Messages ") + said


def _has(numbers: list[int], what: str = "") -> str:
    verb = "has" if len(numbers) == 1 else "have"
    return f"{verb} {what}".rstrip()


def _role(message: dict) -> str:
    role = message.get("role")
    return role[:32] if isinstance(role, str) else "no role"
