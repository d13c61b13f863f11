"""The lock files pin every Python dependency, with hashes, and what runs is what they pin.

`requirements.lock` is what the app and its image install; `requirements-test.lock` adds
the test extras with the same pins (`./playground lock` writes both).
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(\S+)")


def pins(lock: str) -> dict[str, tuple[str, int]]:
    """The lock file's pins: version and number of hashes, by canonical name."""
    found: dict[str, tuple[str, int]] = {}
    name = None
    for line in (REPO / lock).read_text(encoding="utf-8").splitlines():
        if match := PIN.match(line):
            name = canonicalize_name(match[1])
            assert name not in found, f"{lock}: {name} pinned twice"
            found[name] = (match[3], 0)
        elif line.strip().startswith("--hash=sha256:") and name is not None:
            version, hashes = found[name]
            found[name] = (version, hashes + 1)
        elif line and not line.startswith((" ", "#")):
            raise AssertionError(f"{lock}: a line that is not a pin: {line!r}")
    return found


def closure(requirements: list[str], extras: frozenset[str] = frozenset()) -> set[str]:
    """Every distribution `requirements` need, as installed here, by canonical name."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(Requirement(text), extras) for text in requirements]
    while todo:
        requirement, given = todo.pop()
        # A marker names this machine (python_version, sys_platform) and the extras asked
        # of the distribution that requires it.
        if requirement.marker and not any(
            requirement.marker.evaluate({"extra": extra}) for extra in given | {""}
        ):
            continue
        asked = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if asked in seen:
            continue
        seen.add(asked)
        for text in metadata.requires(requirement.name) or []:
            todo.append((Requirement(text), frozenset(requirement.extras)))
    return {name for name, _ in seen}


def project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_every_pin_has_hashes_and_both_locks_agree() -> None:
    app, test = pins("requirements.lock"), pins("requirements-test.lock")
    assert app and set(app) < set(test)
    for name, (version, hashes) in test.items():
        assert hashes >= 1, f"{name} has no hash"
        if name in app:
            assert app[name][0] == version, f"{name}: {app[name][0]} != {version}"


def test_the_app_lock_pins_everything_the_app_needs() -> None:
    needed = closure(project()["dependencies"])
    app = pins("requirements.lock")
    assert needed - set(app) == set(), "needed but not pinned"
    # Besides what the app needs: only the build tools of the project itself.
    assert set(app) - needed <= {"setuptools", "wheel"}, set(app) - needed


def test_the_test_lock_pins_everything_the_suite_needs() -> None:
    needed = closure([*project()["dependencies"], *project()["optional-dependencies"]["test"]])
    assert needed - set(pins("requirements-test.lock")) == set()


def test_what_is_installed_is_what_the_lock_pins() -> None:
    """`./playground test` installed this environment from the test lock."""
    test = pins("requirements-test.lock")
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    for name in closure([*project()["dependencies"], *project()["optional-dependencies"]["test"]]):
        assert installed[name] == test[name][0], f"{name} {installed[name]} is not the pinned one"


def test_the_image_installs_the_lock_with_hashes_and_nothing_else() -> None:
    lines = " ".join((REPO / "Dockerfile").read_text(encoding="utf-8").split("\\\n")).splitlines()
    installs = [line.split() for line in lines if re.match(r"RUN\s+pip\s+install", line)]
    assert len(installs) == 2, installs
    locked, itself = installs
    assert {"--require-hashes", "--no-deps", "-r", "requirements.lock"} <= set(locked)
    # The project alone: nothing left to resolve, and built by the pinned setuptools.
    assert {"--no-deps", "--no-build-isolation", "."} <= set(itself)
