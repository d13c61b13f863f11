"""A sandbox worker's heap after its start: what it loaded is out of the collector's reach,
so the full collections a task triggers scan only what tasks made (see
`guard.settle_heap`; bench.answers shows the p95 it saves)."""

from __future__ import annotations

import gc

from app.pool import WorkerPool


def _frozen_and_young() -> tuple[int, int]:
    """Objects the collector leaves alone, and those it tracks, in this worker."""
    return gc.get_freeze_count(), len(gc.get_objects())


def test_a_worker_starts_with_what_it_loaded_frozen() -> None:
    pool = WorkerPool(cpu_seconds=2, memory_bytes=256 << 20, workers=1)
    try:
        frozen, tracked = pool.run(_frozen_and_young)
    finally:
        pool.close()
    # The modules every worker imports are tens of thousands of objects: frozen, they
    # outnumber what the collector still tracks.
    assert frozen > 10_000
    assert frozen > tracked
