"""Helpers that the tests, the benches and the oracles share.

Tests and benches both import from here, and never from each other: the gunicorn
launcher (`server`), the conversation corpus (`corpus`), the Completion menu's corpus
(`answers`), the read-only data folder beside the repository (`shared_data`), hostile
inputs, the throwaway PostgreSQL server, GGUF field readers, a pebble pool that never
answers (`pool_stubs`) and the CPU timings of the linear-time checks (`timing`). What
the real programs answered, and how to ask them again, is in `oracles/`, which imports
from here; nothing here imports it.
"""

from __future__ import annotations

from pathlib import Path

#: The repository root: where gunicorn.conf.py is, and so where gunicorn starts.
REPO = Path(__file__).resolve().parents[2]

#: Settings that lift the per-client write limits: tests and benches write from one
#: address far faster than a client may (tests/test_quota.py checks the limits on
#: applications of its own).
UNLIMITED_WRITES = {"WRITES_PER_MINUTE": 0, "WRITE_MB_PER_MINUTE": 0}
