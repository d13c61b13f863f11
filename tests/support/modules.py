"""Run in a worker process: what it has loaded (imports nothing itself)."""

from __future__ import annotations

import sys


def loaded_packages(*_limits: object) -> list[str]:
    """The top-level packages in this process's `sys.modules`."""
    return sorted({name.partition(".")[0] for name in sys.modules})
