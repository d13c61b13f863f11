"""Helpers shared by the proof benches (load, fuzz, durability) and `tests/test_proof.py`.

- `Server`: gunicorn from `gunicorn.conf.py` on a free loopback port, in its own session
  (process group), its log in a temporary file; `stop()` SIGTERMs it (the group is killed
  only if it will not stop), `kill9()` SIGKILLs the whole group at once.
- `/proc` scans without psutil: the master's workers (its direct children), the whole
  process tree, and its resident memory; `RssSampler` follows the peak in a thread.
- `Client`: one keep-alive `http.client` connection that reconnects (once) when the
  server closed an idle connection between two requests. Each client is a visitor of
  its own: the server believes one proxy (`PLAYGROUND_TRUSTED_PROXIES=1`, unless the
  bench says otherwise) and each client names its own address in `X-Forwarded-For`, so
  per-client limits count every bench client apart, as they would count real visitors.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: The repository root: where gunicorn.conf.py is, and so where gunicorn starts.
ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
HEALTH_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

#: gunicorn log lines that mean a worker died or was replaced.
WORKER_TROUBLE = ("Worker exiting", "WORKER TIMEOUT", "was sent SIGKILL", "Worker failed to boot")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


# --------------------------------------------------------------------------- /proc


def _stat_map() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) for every process we can see."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            continue  # it exited meanwhile
        # The command name is in parentheses and may itself hold spaces or ')'.
        fields = text[text.rindex(b")") + 2 :].split()
        found[int(entry)] = (int(fields[1]), int(fields[2]))
    return found


def _parent_map() -> dict[int, int]:
    """pid -> parent pid for every process we can see."""
    return {pid: parent for pid, (parent, _) in _stat_map().items()}


def group_members(pgid: int) -> list[int]:
    """The processes still in process group `pgid` (zombies included)."""
    return sorted(pid for pid, (_, group) in _stat_map().items() if group == pgid)


def children(pid: int) -> list[int]:
    """The direct children of `pid` (for a gunicorn master: its workers), sorted."""
    return sorted(child for child, parent in _parent_map().items() if parent == pid)


def process_tree(pid: int) -> list[int]:
    """`pid` and all its descendants (workers and their sandbox processes)."""
    by_parent: dict[int, list[int]] = {}
    for child, parent in _parent_map().items():
        by_parent.setdefault(parent, []).append(child)
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(by_parent.get(current, ()))
    return tree


def rss_bytes(pids: list[int]) -> int:
    """Summed resident set of `pids` (pages shared after fork are counted per process)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * PAGE_SIZE
        except (OSError, IndexError, ValueError):
            continue
    return total


# --------------------------------------------------------------------------- gunicorn


class Server:
    """gunicorn from `gunicorn.conf.py` on a free port, in its own process group."""

    def __init__(self, env: dict[str, str] | None = None, data_dir: str | None = None) -> None:
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self._own_data = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="playground-bench-")
        self.env = {
            **os.environ,
            "PLAYGROUND_DATA_DIR": self.data_dir,
            "PLAYGROUND_TRUSTED_PROXIES": "1",  # the bench is the proxy: see Client
            # The benches write from one address far faster than a client may.
            "PLAYGROUND_WRITES_PER_MINUTE": "0",
            "PLAYGROUND_WRITE_MB_PER_MINUTE": "0",
            **(env or {}),
            "PLAYGROUND_BIND": f"{HOST}:{self.port}",
        }
        # Our own metrics folder (gunicorn.conf.py makes one otherwise and removes it on
        # a clean exit only, which a kill -9 never reaches).
        self.metrics_dir = tempfile.mkdtemp(prefix="playground-bench-metrics-")
        self.env.setdefault("PROMETHEUS_MULTIPROC_DIR", self.metrics_dir)
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self.process: subprocess.Popen | None = None
        #: Seconds the last `start()` took until /healthz answered.
        self.startup_seconds = 0.0

    def start(self) -> float:
        """Start gunicorn and wait for /healthz; returns the seconds it took."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: kill9() takes all of it
        )
        self.startup_seconds = self.wait_healthy()
        return self.startup_seconds

    def wait_healthy(self) -> float:
        assert self.process is not None
        started = time.perf_counter()
        deadline = started + HEALTH_TIMEOUT_S
        while time.perf_counter() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"gunicorn exited with {self.process.returncode}:\n{self.tail()}"
                )
            try:
                connection = http.client.HTTPConnection(HOST, self.port, timeout=2)
                try:
                    connection.request("GET", "/healthz")
                    # Healthy once one worker answers and every worker has been forked
                    # (gunicorn spawns them a little apart).
                    answered = connection.getresponse().status == 200
                    if answered and len(self.worker_pids()) >= self.expected_workers:
                        return time.perf_counter() - started
                finally:
                    connection.close()
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"gunicorn did not answer /healthz in {HEALTH_TIMEOUT_S:g} s")

    @property
    def expected_workers(self) -> int:
        """How many gunicorn workers the settings ask for."""
        return int(self.env.get("PLAYGROUND_WORKERS") or 2)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def worker_pids(self) -> list[int]:
        """The master's direct children: its gunicorn workers."""
        return children(self.pid)

    def rss_bytes(self) -> int:
        """Resident memory of the master, its workers and their sandbox processes."""
        return rss_bytes(process_tree(self.pid))

    def web_rss_bytes(self) -> int:
        """Resident memory of the master and its workers alone: the web processes, which
        no memory limit caps (their worker processes have their own)."""
        return rss_bytes([self.pid, *self.worker_pids()])

    def log_text(self) -> str:
        self.log.flush()
        self.log.seek(0)
        text = self.log.read().decode(errors="replace")
        self.log.seek(0, os.SEEK_END)
        return text

    def tail(self, chars: int = 3000) -> str:
        return self.log_text()[-chars:]

    def worker_trouble(self) -> dict[str, int]:
        """How often each `WORKER_TROUBLE` line, and Python tracebacks, appear in the log."""
        text = self.log_text()
        found = {line: text.count(line) for line in WORKER_TROUBLE}
        found["Traceback"] = text.count("Traceback (most recent call last)")
        return {line: count for line, count in found.items() if count}

    def booted_workers(self) -> int:
        return len(re.findall(r"Booting worker with pid", self.log_text()))

    def stop(self) -> int | None:
        """SIGTERM the master and wait; SIGKILL its process group only if it will not stop."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                print(f"warning: gunicorn ignored SIGTERM for {STOP_TIMEOUT_S:g} s; killing it")
                self._kill_group()
        self._kill_group()  # workers or sandboxes the master left behind, if any
        return self.process.returncode

    def kill9(self) -> list[int]:
        """SIGKILL the master and every worker at once: the whole process group.

        Returns the group's processes still there after 5 s (none, normally).
        """
        assert self.process is not None
        self._kill_group()
        deadline = time.monotonic() + 5
        while (left := group_members(self.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        return left

    def _kill_group(self) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            print("warning: gunicorn master survived SIGKILL for 10 s")

    def close(self) -> None:
        """Stop the server and drop its log (the data folder is the caller's to remove)."""
        try:
            self.stop()
        finally:
            self.log.close()
            shutil.rmtree(self.metrics_dir, ignore_errors=True)

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


@contextlib.contextmanager
def running(env: dict[str, str] | None = None) -> Iterator[Server]:
    """A started `Server` with a temporary data folder; if the block fails, the tail of its
    log is printed (what the server said is the first thing to read); stopped after, and
    its data folder removed."""
    server = Server(env)
    try:
        server.start()
        yield server
    except BaseException:
        print(f"gunicorn log (tail):\n{server.tail()}", file=sys.stderr)
        raise
    finally:
        server.close()
        shutil.rmtree(server.data_dir, ignore_errors=True)


class RssSampler:
    """Samples a server's resident memory every `interval` seconds in a daemon thread:
    the whole process tree (`samples`) and the web processes alone (`web_samples`)."""

    def __init__(self, server: Server, interval: float = 0.2) -> None:
        self.server = server
        self.interval = interval
        self.samples: list[int] = []
        self.web_samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        self.samples.append(self.server.rss_bytes())
        self.web_samples.append(self.server.web_rss_bytes())

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sample()

    @property
    def peak(self) -> int:
        return max(self.samples, default=0)


# --------------------------------------------------------------------------- HTTP


@dataclass
class Response:
    status: int
    body: bytes
    ms: float

    def json(self) -> Any:
        return json.loads(self.body)


_ADDRESSES = itertools.count(1)


def visitor_address() -> str:
    """A client address no other bench client in this process has (10.x.y.z)."""
    number = next(_ADDRESSES)
    return f"10.{number >> 16 & 255}.{number >> 8 & 255}.{number & 255}"


class Client:
    """One keep-alive connection to the server, from a visitor address of its own.

    A request that fails on a connection that already served one, before any answer
    came back, is retried once on a new connection: the server closed the idle
    connection (keep-alive timeout), which is not an error of the request.
    """

    def __init__(self, port: int, timeout: float = 30.0) -> None:
        self.port = port
        self.timeout = timeout
        self.address = visitor_address()
        self.reconnects = 0
        self._connection: http.client.HTTPConnection | None = None
        self._used = False

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            self._connection = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
            self._used = False
        return self._connection

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> Response:
        headers = {"X-Forwarded-For": self.address, **(headers or {})}
        if body is not None:
            headers["Content-Type"] = content_type
        for attempt in range(2):
            connection = self._connect()
            reused = self._used
            started = time.perf_counter()
            try:
                response, sent = self._exchange(connection, method, path, body, headers)
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt or not reused:
                    raise
                self.reconnects += 1
                continue
            except BaseException:
                self.close()
                raise
            elapsed_ms = (time.perf_counter() - started) * 1000
            self._used = True
            if response.will_close or not sent:
                self.close()
            return Response(response.status, data, elapsed_ms)
        raise AssertionError("unreachable")

    @staticmethod
    def _exchange(
        connection: http.client.HTTPConnection,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
    ) -> tuple[http.client.HTTPResponse, bool]:
        """Send the request and get the answer; and whether all the body went out.

        A server may answer before it has read the body (a 413 for an upload over its
        cap) and close the connection: sending the rest then fails, but the answer is
        there to read. Only when there is none is the send's error raised.
        """
        try:
            connection.request(method, path, body=body, headers=headers)
        except (ConnectionResetError, BrokenPipeError) as error:
            try:
                return connection.getresponse(), False
            except (http.client.HTTPException, OSError):
                raise error from None
        return connection.getresponse(), True

    def post_json(self, path: str, payload: Any) -> Response:
        return self.request("POST", path, json.dumps(payload).encode())

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` (0.0 when there are none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def mib(size: int) -> str:
    return f"{size / 2**20:.0f} MiB"
