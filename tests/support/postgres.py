"""A throwaway PostgreSQL server for the tests, on loopback, started from Debian's binaries.

Import the `postgres_url` fixture (or `fresh_postgres_url`, a database of one's own)
into a test module that needs it. PostgreSQL missing is
a failure, not a skip: `./playground test` installs it, so a missing one is a broken
setup that would otherwise hide every replica test.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.support.server import free_port

#: The system user that owns the server when the tests run as root (initdb refuses root).
#: Debian's postgresql package creates it.
SERVER_USER = "postgres"

#: The database the fixture creates for the tests.
DATABASE = "playground"

#: Bounds on starting and stopping the server (seconds).
START_SECONDS = 60
STOP_SECONDS = 30


def postgres_bindir() -> Path:
    """The folder with initdb and pg_ctl; fails the test run when there is none."""
    candidates = []
    if shutil.which("pg_config"):
        # libpq-dev's pg_config may name /usr/bin, which has no server: checked below.
        bindir = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=False
        ).stdout.strip()
        candidates.append(Path(bindir))
    # Debian keeps each major version apart; the newest is the one to use.
    versions = [Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin")]
    candidates += sorted(versions, key=_version, reverse=True)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    pytest.fail(
        "PostgreSQL is not installed (no initdb, pg_ctl): run ./playground test, which "
        "installs it, or apt-get install postgresql.",
        pytrace=False,
    )


def _version(bindir: Path) -> tuple[int, ...]:
    """The version in /usr/lib/postgresql/VERSION/bin, for sorting ("15" -> (15,))."""
    return tuple(int(part) for part in re.findall(r"\d+", bindir.parent.name))


def _as_server_user(command: list[str]) -> list[str]:
    """`command`, run as the server's user when we are root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return command
    if shutil.which("runuser") is None:
        pytest.fail("runuser is missing; it is needed to run PostgreSQL as root", pytrace=False)
    return ["runuser", "-u", SERVER_USER, "--", *command]


def _run(command: list[str], timeout: float) -> None:
    """Run a server command; its output becomes the failure message."""
    result = subprocess.run(
        _as_server_user(command), capture_output=True, text=True, timeout=timeout, check=False
    )
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a fresh database on a private PostgreSQL server, stopped after the run."""
    bindir = postgres_bindir()
    # Directly under /tmp, not in pytest's 0700 folder, which the server's user cannot enter.
    root = Path(tempfile.mkdtemp(prefix="playground-pg-"))
    data, sockets, log = root / "data", root / "sockets", root / "server.log"
    sockets.mkdir()
    if os.geteuid() == 0:
        for path in (root, sockets):
            shutil.chown(path, SERVER_USER)
    port = free_port()
    # Trust authentication on loopback only, no fsync: a test server holds nothing of value.
    _run(
        [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
         "-E", "UTF8", "--no-locale", "--no-sync"],
        timeout=START_SECONDS,
    )  # fmt: skip
    options = f"-k {sockets} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off"
    pg_ctl = str(bindir / "pg_ctl")
    _run(
        [pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", str(START_SECONDS),
         "start"],
        timeout=START_SECONDS + 10,
    )  # fmt: skip
    try:
        server = f"postgresql://postgres@127.0.0.1:{port}"
        with psycopg.connect(f"{server}/postgres", autocommit=True, connect_timeout=10) as admin:
            admin.execute(f"CREATE DATABASE {DATABASE}")
        yield f"{server}/{DATABASE}"
    finally:
        stop = [pg_ctl, "-D", str(data), "-w", "-t", str(STOP_SECONDS), "stop"]
        # fast: disconnect the clients still open (the apps' connections); immediate if
        # that does not finish in time.
        if not _stopped(_as_server_user([*stop, "-m", "fast"])):
            _stopped(_as_server_user([*stop, "-m", "immediate"]))
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture()
def fresh_postgres_url(postgres_url) -> Iterator[str]:
    """A database of its own on the test server, dropped after the test: for tests that
    count or delete everything stored (totals, caps, expiry, migrations)."""
    server = postgres_url.rpartition("/")[0]
    name = "test_" + uuid.uuid4().hex[:16]
    with psycopg.connect(f"{server}/postgres", autocommit=True, connect_timeout=10) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield f"{server}/{name}"
    with psycopg.connect(f"{server}/postgres", autocommit=True, connect_timeout=10) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def _stopped(command: list[str]) -> bool:
    """Run a pg_ctl stop command; whether it stopped the server in time."""
    try:
        result = subprocess.run(command, capture_output=True, timeout=STOP_SECONDS + 10)
    except subprocess.TimeoutExpired:
        return False
    return result.returncode == 0
