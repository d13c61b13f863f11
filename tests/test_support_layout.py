"""Tests and benches share helpers through `tests.support` and never import each other;
the real programs' truth lives in `oracles/`, one package per runtime with its recorders,
harness, cases and recordings, and `app/` imports none of it; without the shared data
folder the suite still collects, and says what it skips; only `timing` tests bound
latencies."""

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


def _outside(folder: str, allowed: tuple[str, ...], forbidden: tuple[str, ...]) -> list:
    """Imports under `folder` of a `forbidden` package, but for the `allowed` parts of it."""
    return [
        (path, name)
        for path, name in _imports(REPO / folder)
        if any(_under(name, package) for package in forbidden)
        and not any(_under(name, package) for package in allowed)
        and name not in forbidden
    ]


def test_benches_import_only_the_shared_test_helpers_and_the_oracles() -> None:
    assert _outside("bench", ("tests.support",), ("tests",)) == []


def test_oracles_import_only_the_shared_test_helpers() -> None:
    assert _outside("oracles", ("tests.support",), ("tests", "bench")) == []


def test_the_shared_test_helpers_import_no_oracle_and_no_bench() -> None:
    assert _outside("tests/support", (), ("oracles", "bench")) == []


def test_the_app_imports_no_test_data() -> None:
    assert _outside("app", (), ("tests", "oracles", "bench")) == []


def _runtime_packages() -> set[str]:
    return {path.parent.name for path in (REPO / "oracles").glob("*/__init__.py")}


def test_each_recorder_lives_in_its_runtimes_oracle() -> None:
    """A recorder (`record*.py`), a recording (`recorded.json`) or a harness folder
    belongs to the oracle package of its runtime, never to `bench/` or `tests/`."""
    assert {"vllm", "llamacpp", "edge_llm", "harmony", "transformers", "tgi"} <= (
        _runtime_packages()
    )
    found = [
        path.relative_to(REPO)
        for folder in ("bench", "tests", "oracles")
        for pattern in ("record*.py", "recorded.json", "harness*")
        for path in (REPO / folder).rglob(pattern)
    ]
    misplaced = [
        str(path)
        for path in found
        if len(path.parts) < 3
        or path.parts[0] != "oracles"
        or path.parts[1] not in _runtime_packages()
    ]
    assert found and misplaced == []


def test_no_runtime_keeps_data_under_tests_support() -> None:
    folders = {path.name for path in (REPO / "tests" / "support").iterdir() if path.is_dir()}
    assert folders & _runtime_packages() == set()


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
