"""The worker side of a bounded pool: limits on CPU, memory and priority around each task.

Each worker process caps its own address space at start (RLIMIT_AS), runs every task
under a CPU-time timer (SIGPROF after the task's CPU seconds) and lowers its scheduling
priority when a task runs long, so a task that burns its allowance competes with nobody
but other long tasks. The pool (`app.pool`) adds a wall-clock backstop.

Tasks arrive pickled by the caller (see `WorkerPool.run`) and answer with plain values:
whatever a task raises becomes a `TemplateProblem` of strings and numbers here, in the
worker, so nothing unpicklable or hostile ever crosses back.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import math
import os
import pickle
import resource
import signal
from typing import Any

from app.problems import TemplateProblem, limit_exceeded, problem_from_exception

#: Scheduling priority of a worker: below the web process (nice 0), which parses
#: requests and answers everyone else.
WORKER_NICE = 5
#: The priority this worker returns to after a long task: WORKER_NICE, or lower when the
#: server itself was started at a lower priority (an unprivileged process may not raise
#: its priority again, so a worker never asks to).
_base_nice = [WORKER_NICE]
#: A task still running after this many seconds drops to the lowest priority.
DEMOTE_AFTER_SECONDS = 0.25
#: The lowest priority (nice value).
LOWEST_NICE = 19
#: Whether this worker may come back to `_base_nice` after a task dropped it: with
#: CAP_SYS_NICE, or an RLIMIT_NICE that allows it (see `can_come_back_to`).
_comes_back = [False]
#: Linux's number for CAP_SYS_NICE in a capability mask.
CAP_SYS_NICE = 23


class CpuTimeExceeded(BaseException):
    """Raised by the CPU timer inside a task.

    A BaseException, so that no `except Exception` in a task's call path (ours, Jinja's,
    a template's) can swallow it and let the task go on.
    """


def _virtual_memory_bytes() -> int:
    """This process's current address-space size, from /proc (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _demote(signum: int, frame: Any) -> None:
    """A long task: let every short one go first."""
    os.setpriority(os.PRIO_PROCESS, 0, LOWEST_NICE)


def can_come_back_to(nice: int) -> bool:
    """Whether this process may lower its nice value to `nice` again once raised: it has
    CAP_SYS_NICE, or its RLIMIT_NICE allows it (`20 - nice`: 15 for nice 5, which
    Docker's `--ulimit nice=15` gives)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NICE)
    if soft == resource.RLIM_INFINITY or soft >= 20 - nice:
        return True
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_SYS_NICE & 1)
    return False


def _out_of_cpu(signum: int, frame: Any) -> None:
    raise CpuTimeExceeded


def priority_warning() -> str | None:
    """What to tell the operator when workers started from this process could not come
    back to their priority after a long task (None when they can)."""
    nice = max(os.getpriority(os.PRIO_PROCESS, 0), WORKER_NICE)
    if can_come_back_to(nice):
        return None
    return (
        f"Sandbox workers run at nice {nice} and drop to {LOWEST_NICE} for long tasks and for"
        " clients that are not known, but cannot come back: this process has neither"
        f" CAP_SYS_NICE nor an RLIMIT_NICE of {20 - nice} or more. Tasks are then lowered"
        " only once they run long, and a worker that ran one stays low, beside the bombs."
        f" Give it the limit: `docker run --ulimit nice={20 - nice}`, or `ulimit -e"
        f" {20 - nice}` (prlimit --nice) before starting the server."
    )


def start_worker(memory_bytes: int, warm_up: str | None = None) -> None:
    """Set the worker's priority, timers and address-space cap.

    `warm_up` names a module-level function (`package.module:function`) called before the
    cap is set, to load what every task needs once.
    """
    _base_nice[0] = max(os.getpriority(os.PRIO_PROCESS, 0), WORKER_NICE)
    os.setpriority(os.PRIO_PROCESS, 0, _base_nice[0])
    _comes_back[0] = can_come_back_to(_base_nice[0])
    signal.signal(signal.SIGALRM, _demote)
    signal.signal(signal.SIGPROF, _out_of_cpu)
    # A worker killed by a limit (SIGXCPU, or an abort when native code runs out of
    # memory) must not leave a core file behind: hostile input could fill the disk.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if warm_up:
        module, _, name = warm_up.partition(":")
        getattr(importlib.import_module(module), name)()
    settle_heap()
    limit = _virtual_memory_bytes() + memory_bytes
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def settle_heap() -> None:
    """Put every object alive now (the modules, what the warm-up loaded) out of the
    garbage collector's reach. A task's full collections then scan only what tasks made:
    a reading that builds many objects (a 100 kB unclosed JSON array through llama.cpp's
    PEG parser) paid 20-30 ms a collection scanning the imports, its p95 two to three
    times its p50 (bench.answers: 45 ms p95 before, 17-19 ms after)."""
    gc.collect()
    gc.freeze()


#: CPU seconds granted past the task's own before the kernel stops the worker: the timer
#: (SIGPROF) answers first whenever Python code is running.
KERNEL_CPU_GRACE_SECONDS = 1


def _arm_kernel_cpu_limit(cpu_seconds: float) -> None:
    """RLIMIT_CPU just past this task's budget: the kernel's SIGXCPU ends the worker even
    inside one long call into native code, where Python's signal handler cannot run (a
    tokenizer regex, say). The pool reports that death as the CPU limit."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(used + cpu_seconds) + KERNEL_CPU_GRACE_SECONDS
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _restore_priority() -> None:
    # Without CAP_SYS_NICE a process cannot raise its priority again: it stays low.
    with contextlib.suppress(PermissionError):
        os.setpriority(os.PRIO_PROCESS, 0, _base_nice[0])


#: CPU seconds the running task spent in helper processes (the transformers.js engine's Node
#: child), which this process's own rusage cannot see.
_helper_cpu = [0.0]


def charge_helper_cpu(seconds: float) -> None:
    """Count CPU time the running task spent in a helper process as its own."""
    _helper_cpu[0] += seconds


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_guarded(cpu_seconds: float, payload: bytes, lowest: bool = False) -> bytes:
    """Run one pickled `(function, args)` task; answer `(ok, value, cpu)`, pickled here.

    `cpu` is the CPU time the task used: what the request cost, whatever the load.
    `lowest`: a task for a client that is not known, at the lowest priority from its
    start, when this worker can come back to its own afterwards (else only once it runs
    long: a worker that cannot come back would stay low for every task after).

    Pickling the answer here, under the task's CPU timer, turns an answer that cannot
    be sent (nested too deep, or holding an object a template made) into a problem
    instead of a worker that dies while replying. Problems carry only plain values.
    """
    if lowest and _comes_back[0]:
        _demote(signal.SIGALRM, None)
    else:
        signal.setitimer(signal.ITIMER_REAL, DEMOTE_AFTER_SECONDS)
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
    _arm_kernel_cpu_limit(cpu_seconds)
    _helper_cpu[0] = 0.0
    started = _cpu_used()
    try:
        try:
            function, args = pickle.loads(payload)
            value = function(*args)
            answer = (True, value, _cpu_used() - started + _helper_cpu[0])
            return pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except CpuTimeExceeded:
            raise
        except BaseException as error:  # MemoryError and RecursionError included
            spent = _cpu_used() - started + _helper_cpu[0]
            return _pickled_problem(problem_from_exception(error), spent)
    except CpuTimeExceeded:
        message = f"The task used more than {cpu_seconds:g} s of CPU time and was stopped."
        return _pickled_problem(limit_exceeded("cpu_seconds", message), cpu_seconds)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        if os.getpriority(os.PRIO_PROCESS, 0) != _base_nice[0]:
            _restore_priority()


def _pickled_problem(problem: TemplateProblem, cpu: float) -> bytes:
    answer = (False, problem, cpu)
    return pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
