"""Tests and benches share helpers through `tests.support` and never import each other;
without the shared data folder the suite still collects, and says what it skips; only
`timing` tests bound latencies."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO
from tests.support.server import Server


def _imports(folder: Path) -> list[tuple[str, str]]:
    """(file, imported module) for every import under `folder`."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found += [(str(path.relative_to(REPO)), name) for name in names]
    return found


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_tests_never_import_benches_nor_conftest() -> None:
    bad = [
        (path, name)
        for path, name in _imports(REPO / "tests")
        if _under(name, "bench") or _under(name, "tests.conftest")
    ]
    assert bad == []


def test_benches_import_only_the_shared_test_helpers() -> None:
    bad = [
        (path, name)
        for path, name in _imports(REPO / "bench")
        if _under(name, "tests") and not _under(name, "tests.support") and name != "tests"
    ]
    assert bad == []


def test_the_suite_collects_without_the_shared_folder(tmp_path: Path) -> None:
    env = {**os.environ, "PLAYGROUND_TEST_SHARED": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"needs the shared test data at {tmp_path}" in done.stdout
    assert "error" not in done.stdout.splitlines()[-1]


def test_only_a_timing_test_may_bound_a_latency(tmp_path: Path) -> None:
    """`./playground test` runs the tests without the `timing` mark beside each other,
    where a latency bound would not hold: `Server.survives` refuses to run in them."""
    server = Server(data_dir=str(tmp_path))  # never started: the check comes first
    try:
        with pytest.raises(AssertionError, match="mark the test `timing`"):
            server.survives(lambda: None)
    finally:
        server.close()
