"""gunicorn started the way `./playground serve` starts it, for tests and benches alike.

- `Server`: gunicorn from `gunicorn.conf.py` on a free loopback port, in its own session
  (process group), its log in a temporary file; `close()` SIGTERMs it (the group is
  killed only if it will not stop), `kill9()` SIGKILLs the whole group at once. Its
  environment is ours plus what the caller gives: nothing is relaxed unless asked for.
- Its processes and their memory, read from `/proc` (`tests.support.processes`).
- Plain `urllib` requests (`post`, `get`, `send`), and `survives`: an attack runs while
  a normal render must stay fast and the gunicorn workers must live on.
"""

from __future__ import annotations

import contextlib
import http.client
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
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TypeVar

from tests.support import REPO, UNLIMITED_WRITES
from tests.support.processes import children, command, group_members, process_tree, rss_bytes

T = TypeVar("T")
HOST = "127.0.0.1"
HEALTH_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 20.0

#: gunicorn log lines that mean a worker died or was replaced.
WORKER_TROUBLE = ("Worker exiting", "WORKER TIMEOUT", "was sent SIGKILL", "Worker failed to boot")

#: Whether the running test carries the `timing` mark (tests/conftest.py says so before
#: each test): only those run alone, so only they may bound a latency (`survives`).
timing_test = threading.Event()

#: The suite's `live_server` (tests/conftest.py): one worker, four threads, a 1 s render
#: limit (to keep tests fast), no per-client rules or write limits (its tests attack from
#: one address; the rules have servers of their own).
LIVE_ENV = {
    "PLAYGROUND_WORKERS": "1",
    "PLAYGROUND_THREADS": "4",
    "PLAYGROUND_CPU_SECONDS": "1",
    "PLAYGROUND_CLIENT_CONCURRENCY": "0",
    "PLAYGROUND_HEAVY_SLOTS": "4",
    # No slot kept for known clients: every request of the tests' one address may use all
    # four (a bomb sent while the kept one was busy was refused, 503, on a loaded machine).
    "PLAYGROUND_KNOWN_SLOTS": "0",
    **{f"PLAYGROUND_{key}": str(value) for key, value in UNLIMITED_WRITES.items()},
}

#: A small render that must stay fast while the server is under attack.
NORMAL_RENDER = {
    "template": "{{ messages[0].content }}",
    "messages": [{"role": "user", "content": "Hello!"}],
}


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


# --------------------------------------------------------------------------- gunicorn


class Server:
    """gunicorn from `gunicorn.conf.py` on a free port, in its own process group.

    `env` adds to (or overrides) this process's environment; a `PLAYGROUND_DATA_DIR`
    there, or `data_dir`, names the data folder, else a temporary one is made. `repo` is
    the checkout to serve (a bench compares another one's code with this one's).
    """

    def __init__(
        self,
        env: dict[str, str] | None = None,
        data_dir: str | None = None,
        repo: str | None = None,
    ) -> None:
        env = env or {}
        self.repo = repo or REPO
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.data_dir = (
            env.get("PLAYGROUND_DATA_DIR") or data_dir or tempfile.mkdtemp(prefix="playground-")
        )
        self.env = {
            **os.environ,
            "PLAYGROUND_DATA_DIR": self.data_dir,
            **env,
            "PLAYGROUND_BIND": f"{HOST}:{self.port}",
        }
        # Our own metrics folder (gunicorn.conf.py makes one otherwise and removes it on
        # a clean exit only, which a kill -9 never reaches).
        self.metrics_dir = tempfile.mkdtemp(prefix="playground-metrics-")
        self.env.setdefault("PROMETHEUS_MULTIPROC_DIR", self.metrics_dir)
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self.process: subprocess.Popen | None = None
        #: Seconds the last `start()` took until /healthz answered.
        self.startup_seconds = 0.0

    def start(self) -> float:
        """Start gunicorn and wait for /healthz; returns the seconds it took."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"],
            cwd=self.repo,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: kill9() takes all of it
        )
        self.startup_seconds = self.wait_healthy()
        return self.startup_seconds

    def wait_healthy(self) -> float:
        """Wait until one worker answers /healthz and every worker has been forked
        (gunicorn spawns them a little apart), so that worker pids compare whole."""
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
        """The master's gunicorn workers: its direct children that run its command."""
        master = command(self.pid)[:40]
        return [pid for pid in children(self.pid) if command(pid).startswith(master)]

    def rss_bytes(self) -> int:
        """Resident memory of the master, its workers and their sandbox processes."""
        return rss_bytes(process_tree(self.pid))

    def web_rss(self) -> int:
        """Resident bytes of the gunicorn workers themselves (not their worker processes)."""
        return rss_bytes(self.worker_pids())

    def web_rss_bytes(self) -> int:
        """Resident memory of the master and its workers alone: the web processes, which
        no memory limit caps (their worker processes have their own)."""
        return rss_bytes([self.pid, *self.worker_pids()])

    def peak_web_rss(self, work: Callable[[], object]) -> int:
        """The most resident memory the gunicorn workers had while `work` ran."""
        samples = [self.web_rss()]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.02):
                samples.append(self.web_rss())

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            work()
        finally:
            done.set()
            sampler.join()
        return max(samples)

    # ----------------------------------------------------------------------- log

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

    # ----------------------------------------------------------------------- requests

    def post(self, path: str, body: object, timeout: float = 30) -> tuple[int, dict]:
        """POST `body` as JSON: the status and the JSON answer."""
        data = json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def get(self, path: str, timeout: float = 10) -> int:
        """GET `path`: the status."""
        with urllib.request.urlopen(self.url + path, timeout=timeout) as response:
            return response.status

    def send(
        self,
        method: str,
        path: str,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30,
    ) -> tuple[int, dict[str, str], bytes]:
        """Any request, as raw as an attacker would send it: status, headers, body."""
        request = urllib.request.Request(self.url + path, data=data, method=method)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def survives(self, attack: Callable[[], T], attackers: int = 1) -> list[T]:
        """Run `attack` from `attackers` threads; meanwhile a small render must answer
        within a second, and afterwards the same gunicorn workers must still serve."""
        assert timing_test.is_set(), "survives() bounds a latency: mark the test `timing`"
        before = self.worker_pids()
        assert before, "no gunicorn workers found"
        with ThreadPoolExecutor(max_workers=attackers + 1) as executor:
            futures = [executor.submit(attack) for _ in range(attackers)]
            time.sleep(0.1)  # let the attack start first
            started = time.monotonic()
            status, body = self.post("/api/render", NORMAL_RENDER)
            normal_seconds = time.monotonic() - started
            results = [future.result(timeout=120) for future in futures]
        assert (status, body.get("prompt")) == (200, "Hello!"), body
        assert normal_seconds < 1.0, f"a normal render took {normal_seconds:.2f} s"
        assert self.process is not None and self.process.poll() is None, "gunicorn died"
        assert self.worker_pids() == before, "a gunicorn worker was replaced"
        return results

    # ----------------------------------------------------------------------- stopping

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


def start_gunicorn(env: dict[str, str] | None = None) -> Server:
    """A started `Server` (the caller closes it)."""
    server = Server(env)
    try:
        server.start()
    except BaseException:
        server.close()
        raise
    return server


@contextlib.contextmanager
def running(server: Server) -> Iterator[Server]:
    """`server` started; if the block fails, the tail of its log is printed (what the
    server said is the first thing to read); stopped after, and its data folder removed."""
    try:
        server.start()
        yield server
    except BaseException:
        print(f"gunicorn log (tail):\n{server.tail()}", file=sys.stderr)
        raise
    finally:
        server.close()
        shutil.rmtree(server.data_dir, ignore_errors=True)
