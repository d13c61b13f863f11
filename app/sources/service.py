"""Source workers seen from the web process: lanes, each one bounded worker process.

Building a tokenizer costs up to seconds and hundreds of MB, so a worker keeps the ones
it built (`worker.py`). To build each source once, its work goes to a worker that holds
it ("affinity"); to keep one slow or hostile source from holding up everyone, a busy
lane is passed over for an idle one, which builds its own copy. pebble's pool picks
workers itself, so each lane is a pool of one worker, and `_pick` chooses the lane.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import Any

from app.budget import OverLimit
from app.pool import WorkerPool
from app.problems import TemplateProblem
from app.sources.limits import SourceLimits
from app.sources.worker import (
    Answer,
    NotHeld,
    Spooled,
    adopt_tokenizer,
    build_tokenizer,
    load_source,
    ping,
    prebuild_tokenizer,
    tokenize_texts,
)


class _Lane:
    """One worker process, what it is running, and the sources it has said it holds."""

    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool
        self.busy = 0
        self.held: frozenset[str] = frozenset()


class SourceFailed(Exception):
    """The source's own code failed (the tokenizers library panicked on it, say)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class SourceWorkers:
    """Runs source tasks in `lanes` bounded processes, each with its own tokenizer cache."""

    def __init__(
        self,
        *,
        lanes: int,
        cpu_seconds: float,
        memory_bytes: int,
        limits: SourceLimits,
        on_cpu: Callable[[float], None] | None = None,
    ) -> None:
        self.limits = limits
        self._lanes = [
            _Lane(
                WorkerPool(
                    cpu_seconds=cpu_seconds,
                    memory_bytes=memory_bytes,
                    workers=1,
                    noun="The source",
                    # Loaded after the fork, not preloaded: every pool forks from the
                    # one forkserver, and sandbox workers must not hold tokenizers or gguf.
                    warm_up="app.sources.worker:warm_up",
                    on_cpu=on_cpu,
                )
            )
            for _ in range(max(1, lanes))
        ]
        self.lanes = len(self._lanes)
        self._lock = threading.Lock()
        #: The process that started every lane's worker (`start`), if any, and how.
        self._started_in: int | None = None
        self._starting: list[threading.Thread] = []

    def start(self, wait: bool = False) -> None:
        """Start every lane's worker, in the background (`wait`: until they run), once
        per process. A worker takes about a second to start (it imports the tokenizers
        library): an early build (`prebuild`) on a lane never used before would wait for
        that, so the first source task starts them all."""
        with self._lock:
            if self._started_in != os.getpid():
                self._started_in = os.getpid()
                unstarted = [lane for lane in self._lanes if not lane.pool.started]
                for lane in unstarted:
                    lane.busy += 1  # now, not in the thread: `prebuild` sees it at once
                self._starting = [
                    threading.Thread(target=self._start_lane, args=(lane,), daemon=True)
                    for lane in unstarted
                ]
                for thread in self._starting:
                    thread.start()
            starting = self._starting
        for thread in starting if wait else []:
            thread.join()

    def _start_lane(self, lane: _Lane) -> None:
        """Start a lane's worker with a task that does nothing; the lane was made busy."""
        try:
            with contextlib.suppress(Exception):  # a worker that cannot start fails tasks
                lane.pool.run(ping)
        finally:
            with self._lock:
                lane.busy -= 1

    def load(
        self,
        kind: str,
        data: bytes,
        file_name: str | None,
        unbuilt: str | None = None,
        elsewhere: bool = False,
    ) -> Any:
        """Parse and build a source: `Loaded`, `IncompleteHeader` or `Refused` (`unbuilt`:
        why its tokenizer is not to be built; `elsewhere`: a `prebuild` builds it)."""
        self.start()
        with _spooled(data) as handed:
            args = (kind, handed, file_name, self.limits, unbuilt, elsewhere)
            return self._run(None, load_source, *args)

    def prebuild(
        self, key: str, tokenizer_json: bytes, config: bytes | None
    ) -> Callable[[], Callable[[str], Any]] | None:
        """A build of a tokenizer.json on a lane of its own, for as long as the upload's
        parse takes on another, or None when fewer than two lanes are idle (waiting
        behind other work would cost more than the parse). The lane is taken now; the
        build runs when the returned function is called, and gives a function that keeps
        the tokenizer as a source's (`adopt_tokenizer`) and answers its `TokenizerInfo`."""
        self.start()  # lanes starting now are busy: the first upload builds after its parse
        with self._lock:
            idle = [lane for lane in self._lanes if not lane.busy]
            if len(idle) < 2:
                return None
            lane = idle[0]
            lane.busy += 1  # taken: the upload's parse goes to another lane

        def build() -> Callable[[str], Any]:
            try:
                with _spooled(tokenizer_json) as handed:
                    args = (key, handed, config, self.limits)
                    info = self._run(lane, prebuild_tokenizer, *args)
            finally:
                with self._lock:
                    lane.busy -= 1

            def adopt(source_id: str) -> Any:
                self._run(lane, adopt_tokenizer, key, source_id)
                return info

            return adopt

        return build

    def build(self, source_id: str, stored: Callable[[], tuple[str, bytes] | None]) -> Any:
        """Build a parsed source's tokenizer: its `TokenizerInfo` (ready or failed), or
        `Unbuildable`, or None when `stored()` no longer has its bytes. Runs on the worker
        that parsed it, unless that one is busy (then another parses it again)."""
        return self._on_holder(self._pick(source_id), stored, build_tokenizer, source_id)

    def tokenize(
        self,
        source_id: str,
        texts: list[str],
        flags: tuple[bool, bool],
        window: tuple[int, int],
        stored: Callable[[], tuple[str, bytes] | None],
    ) -> Any:
        """`Tokenized` texts; `stored()` gives the source's bytes if its worker lacks them."""
        lane = self._pick(source_id)
        return self._on_holder(lane, stored, tokenize_texts, source_id, texts, flags, window)

    def _on_holder(
        self,
        lane: _Lane,
        stored: Callable[[], tuple[str, bytes] | None],
        function: Callable[..., Any],
        *args: Any,
    ) -> Any:
        """`function(*args, held, limits)` on `lane`'s worker, which usually holds the
        source (`held` None); if it answers `NotHeld`, again with the stored bytes spooled
        to it (`held` = (kind, bytes)). None when the store no longer has them."""
        answer = self._run(lane, function, *args, None, self.limits)
        if not isinstance(answer, NotHeld):
            return answer
        raw = stored()
        if raw is None:
            return None
        kind, data = raw
        with _spooled(data) as handed:
            return self._run(lane, function, *args, (kind, handed), self.limits)

    def close(self) -> None:
        """Stop every worker (they start again on next use)."""
        for lane in self._lanes:
            lane.pool.close()

    def _pick(self, source_id: str | None) -> _Lane:
        """An idle lane holding the source, else an idle lane, else the least busy one."""
        with self._lock:
            by_preference = sorted(
                self._lanes, key=lambda lane: (lane.busy, source_id not in lane.held)
            )
            return by_preference[0]

    def _run(self, lane: _Lane | None, function: Callable[..., Answer], *args: Any) -> Any:
        lane = lane or self._pick(None)
        with self._lock:
            ahead = lane.busy
            lane.busy += 1
        try:
            answer = lane.pool.run(function, *args, ahead=ahead)
        except TemplateProblem as problem:
            lane.held = frozenset()  # the worker may have been replaced: assume it is empty
            raise _translated(problem) from None
        finally:
            with self._lock:
                lane.busy -= 1
        lane.held = frozenset(answer.held)
        return answer.value


#: Inputs at least this large go to a worker through a temporary file, not a pipe.
SPOOL_BYTES = 1 << 20


@contextlib.contextmanager
def _spooled(data: bytes) -> Iterator[bytes | Spooled]:
    """`data` itself when small, else a temporary file holding it (removed after)."""
    if len(data) < SPOOL_BYTES:
        yield data
        return
    with tempfile.NamedTemporaryFile(prefix="playground-source-") as spool:
        spool.write(data)
        spool.flush()
        yield Spooled(spool.name)


#: What a worker's problem says of source work (its own messages speak of templates).
_MESSAGES = {
    "memory": "Reading the source or running its tokenizer ran out of its memory allowance.",
    "recursion": "The source nests too deeply to read.",
}
#: A worker's limit names, as the settings of source work spell them.
_LIMIT_NAMES = {"cpu_seconds": "source_cpu_seconds", "memory": "source_memory_mb"}


def _translated(problem: TemplateProblem) -> Exception:
    """A worker's problem as the web answers it: a limit, or the source's own failure."""
    if problem.limit is not None:
        limit = _LIMIT_NAMES.get(problem.limit, problem.limit)
        message = _MESSAGES.get(problem.limit, problem.message)
        return OverLimit(limit, f"{message} (limit: PLAYGROUND_{limit.upper()})")
    return SourceFailed(f"{problem.type}: {problem.message}")
