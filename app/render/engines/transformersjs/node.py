"""A long-lived Node process that renders with @huggingface/jinja, under the sandbox's limits.

Each sandbox worker that renders with the transformers.js engine keeps one Node child
(`runner.cjs`) and talks to it in JSON lines over stdin and stdout. Node is untrusted
code's host here, so the child gets the worker's limits on its own terms:

- memory: V8's heap is capped at the render's memory allowance (`--max-old-space-size`),
  and the address space (RLIMIT_AS) at that plus what V8 reserves at start; a child that
  runs out dies, and the render answers the `memory` limit;
- time: the worker watches the child's CPU time (from /proc) while it waits, and a
  wall-clock deadline; past either the child is killed and the render answers
  `cpu_seconds` (the worker's own CPU timer cannot see a child's CPU). A render that runs
  long drops the child to the lowest priority, and its CPU time counts as the task's;
- output: the runner stops a template once a block's text passes `output_chars`.

A killed or dead child is replaced at the next render. The child dies with its worker
(PR_SET_PDEATHSIG), so a worker the pool replaces leaves no Node process behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import os
import resource
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Self

from app.pool.guard import DEMOTE_AFTER_SECONDS, KERNEL_CPU_GRACE_SECONDS, charge_helper_cpu
from app.problems import TemplateProblem, limit_exceeded
from app.render.limits import RenderLimits

RUNNER = Path(__file__).with_name("runner.cjs")

#: Address space V8 reserves at start beyond its heap (code space, the Wasm and pointer
#: cages): Node fails to start with less. The heap allowance comes on top.
NODE_BASE_ADDRESS_SPACE = 1536 * 1024 * 1024
#: Wall-clock seconds per CPU second a render may take before its child is killed: below
#: the pool's backstop (4x), so the render answers itself with the limit it hit.
WALL_CLOCK_FACTOR = 3
#: How often the CPU time of a busy child is read.
POLL_SECONDS = 0.02
#: Bytes read from the child's stdout at once.
READ_CHUNK = 1 << 16

#: The nice value of a render that runs long.
LOWEST_PRIORITY = 19

_PR_SET_PDEATHSIG = 1
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class NodeUnavailable(RuntimeError):
    """Node.js or @huggingface/jinja is not installed where the engine looks for them."""


def limit_child(address_space: int) -> None:
    """In the child before exec: its own address-space cap, no core files, die with the worker."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        address_space = min(address_space, hard)
    resource.setrlimit(resource.RLIMIT_AS, (address_space, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # The worker's CPU limit is armed for its current task; the child arms its own per render.
    _, hard_cpu = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (hard_cpu, hard_cpu))
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        # The command name may hold spaces and parentheses: fields count from the last ')'.
        fields = stat.read().rpartition(b")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def _arm_kernel_cpu_limit(pid: int, cpu_seconds: float) -> None:
    """RLIMIT_CPU of the child just past this render's budget: the kernel's backstop (SIGXCPU)
    should the watch in `_read_answer` be late, as the sandbox guard arms its worker's."""
    _, hard = resource.prlimit(pid, resource.RLIMIT_CPU)
    soft = math.ceil(cpu_seconds) + KERNEL_CPU_GRACE_SECONDS
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.prlimit(pid, resource.RLIMIT_CPU, (soft, hard))


def _demote(pid: int) -> bool:
    """A long render: the child drops to the lowest priority, as the guard drops a worker
    whose task runs long (until its next render: `_follow_worker`)."""
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, LOWEST_PRIORITY)
    return True


def _follow_worker(pid: int) -> None:
    """The child at its worker's priority now: the task's (the lowest, for a client that
    is not known), since the child outlives the tasks it renders for. Coming back up
    from the lowest needs what lets the worker come back (CAP_SYS_NICE or RLIMIT_NICE);
    without it, the child stays where it is."""
    wanted = os.getpriority(os.PRIO_PROCESS, 0)
    with contextlib.suppress(OSError):
        if os.getpriority(os.PRIO_PROCESS, pid) != wanted:
            os.setpriority(os.PRIO_PROCESS, pid, wanted)


class NodeRenderer:
    """One Node child, started on first use with a heap of `limits.memory_bytes`."""

    #: The script the child runs: this engine's renderer; a subclass runs its own
    #: script in the same sandbox (one JSON request per line, one answer per line).
    SCRIPT: Path = RUNNER
    #: What the child needs that `npm ci` installs, named when Node cannot load it.
    PACKAGES = "@huggingface/jinja"

    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self._child: subprocess.Popen[bytes] | None = None

    @classmethod
    def of(cls, limits: RenderLimits) -> Self:
        """This process's renderer of this class for `limits`, made on first use."""
        renderer = _RENDERERS.get((cls, limits))
        if renderer is None:
            renderer = _RENDERERS[cls, limits] = cls(limits)
        return renderer  # type: ignore[return-value]

    def render(self, template: str, context: dict[str, Any], now: list[int] | None) -> str:
        """The prompt, or a `TemplateProblem` for what the template did or the limit it hit."""
        request = {
            "template": template,
            "context": context,
            "max_chars": self.limits.output_chars,
            "now": now,
        }
        # ASCII JSON: text that is not valid Unicode (a lone surrogate) crosses as an escape.
        answer = self._exchange(json.dumps(request).encode("ascii") + b"\n")
        if "error" in answer:
            error = answer["error"]
            raise TemplateProblem(error["type"], error["message"], None, error.get("limit"))
        return answer["prompt"]

    def _exchange(self, line: bytes) -> dict[str, Any]:
        child = self._running()
        _follow_worker(child.pid)
        started = _cpu_seconds(child.pid)
        try:
            _arm_kernel_cpu_limit(child.pid, started + self.limits.cpu_seconds)
            assert child.stdin is not None
            child.stdin.write(line)
            child.stdin.flush()
            answer = json.loads(self._read_answer(child, started))
        except BaseException as error:
            # An answer half read (a limit, the worker's own timer) leaves the pipe unusable.
            stopped = isinstance(error, TemplateProblem) and error.limit == "cpu_seconds"
            self._charge(child, started, self.limits.cpu_seconds if stopped else 0.0)
            self.stop()
            raise
        self._charge(child, started)
        return answer  # type: ignore[no-any-return]

    def _charge(self, child: subprocess.Popen[bytes], started: float, least: float = 0.0) -> None:
        """Count the child's CPU time for this render (at least `least`: a render stopped
        for time counts its whole allowance, as the pool counts its tasks) as the task's own."""
        spent = least
        # A child that died and was reaped has no /proc entry left: nothing more to count.
        with contextlib.suppress(OSError):
            spent = max(spent, _cpu_seconds(child.pid) - started)
        charge_helper_cpu(spent)

    def _read_answer(
        self, child: subprocess.Popen[bytes], cpu_start: float, demote: bool = True
    ) -> bytes:
        assert child.stdout is not None
        fd = child.stdout.fileno()
        cpu_seconds = self.limits.cpu_seconds
        begun = time.monotonic()
        deadline = begun + cpu_seconds * WALL_CLOCK_FACTOR
        demoted = not demote
        chunks: list[bytes] = []
        while True:
            readable, _, _ = select.select([fd], [], [], POLL_SECONDS)
            if not demoted and time.monotonic() - begun > DEMOTE_AFTER_SECONDS:
                demoted = _demote(child.pid)
            if readable:
                chunk = os.read(fd, READ_CHUNK)
                if not chunk:
                    raise self._death(child)
                chunks.append(chunk)
                if chunk.endswith(b"\n"):
                    return b"".join(chunks)
                continue
            if _cpu_seconds(child.pid) - cpu_start > cpu_seconds:
                raise limit_exceeded(
                    "cpu_seconds", f"The template used more than {cpu_seconds:g} s of CPU time."
                )
            if time.monotonic() > deadline:
                raise limit_exceeded(
                    "cpu_seconds",
                    f"The template ran for more than {cpu_seconds * WALL_CLOCK_FACTOR:g} s "
                    "and was stopped.",
                )

    #: How the limits' messages name the child process.
    PROGRAM = "Node"

    def _death(self, child: subprocess.Popen[bytes]) -> Exception:
        """What a child that closed its output died of: V8 aborts when its heap is full;
        exit code 1 is Node's own failure (the runner or @huggingface/jinja not found)."""
        code = child.wait(timeout=5)
        if code == 1:
            return NodeUnavailable(
                f"The Node process {self.SCRIPT.name} could not start: is {self.PACKAGES} "
                "installed (npm ci)?"
            )
        return self._limit_of(code)

    def _limit_of(self, code: int) -> Exception:
        """The limit a child that ended with `code` ran into: the kernel's CPU limit
        (SIGXCPU), else its memory (the runtime aborts when its heap is full)."""
        if code == -signal.SIGXCPU:
            return limit_exceeded(
                "cpu_seconds",
                f"The template used up its {self.limits.cpu_seconds:g} s of CPU time; its "
                f"{self.PROGRAM} process was stopped and will be replaced.",
            )
        return limit_exceeded(
            "memory",
            f"The template ran out of its memory allowance (PLAYGROUND_MEMORY_MB); its "
            f"{self.PROGRAM} process ended (exit code {code}) and will be replaced.",
        )

    def _running(self) -> subprocess.Popen[bytes]:
        if self._child is None or self._child.poll() is not None:
            child = self._start()
            try:
                # Node's start-up is not a render: wait for the runner before timing one.
                self._read_answer(child, _cpu_seconds(child.pid), demote=False)
            except BaseException:
                child.kill()
                child.wait()
                raise
            self._child = child
        return self._child

    def _start(self) -> subprocess.Popen[bytes]:
        node = shutil.which("node")
        if node is None:
            raise NodeUnavailable(f"Node.js is not installed: {self.SCRIPT.name} needs it.")
        heap_mb = max(self.limits.memory_bytes // (1024 * 1024), 16)
        address_space = NODE_BASE_ADDRESS_SPACE + self.limits.memory_bytes
        return subprocess.Popen(
            [node, "--expose-gc", f"--max-old-space-size={heap_mb}", str(self.SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self.SCRIPT.parent,
            # The locale fixes the month names strftime_now writes (English, as Python's C locale).
            env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"},
            preexec_fn=lambda: limit_child(address_space),
        )

    def stop(self) -> None:
        """Kill the child; the next render starts a fresh one."""
        child, self._child = self._child, None
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        if child is not None:
            for stream in (child.stdin, child.stdout):
                if stream is not None:
                    stream.close()


#: One renderer per process, class and limits (a sandbox worker has one set of limits).
_RENDERERS: dict[tuple[type, RenderLimits], NodeRenderer] = {}


def node_renderer(limits: RenderLimits) -> NodeRenderer:
    """This process's Node renderer for `limits`."""
    return NodeRenderer.of(limits)
