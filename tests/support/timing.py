"""CPU time, for the suite's checks that a reader stays linear on hostile input.

Those tests compare two timings of work done in this process: a big input against a
small one, or against a plain scan of the same text. Wall time on a busy machine also
counts the time slices other processes take, and a long run loses more of them than a
short one (a 20 ms run waits out other processes' slices; a 2 ms one often fits between
them): with the suite's other workers and a busy process beside them, readers that take
ten times as long for ten times the text measured 13x to 40x, and failed. The CPU time of
this process counts only its own work, so the ratio stays the parser's.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def cpu_seconds(run: Callable[[], object], repeat: int = 3) -> float:
    """The least CPU time this process spends in `run()` over `repeat` calls, with the
    garbage collector held off (its passes over other tests' objects are not the
    parser's doing)."""
    best = float("inf")
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            started = time.process_time()
            run()
            best = min(best, time.process_time() - started)
    finally:
        if collecting:
            gc.enable()
    return best
