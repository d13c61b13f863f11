"""A stand-in for pebble's pool that takes tasks and never answers them."""

from __future__ import annotations

from concurrent.futures import Future


class NeverAnswers:
    """pebble's pool with its task futures never completed. `active`: its loops still run
    (a wedged pool), or they stopped (its workers died as they started, and a task was
    queued at that very moment, so nothing ever picks it up)."""

    def __init__(self, active: bool = True) -> None:
        self.active = active

    def schedule(self, *args: object, **kwargs: object) -> Future:
        return Future()

    def stop(self) -> None:
        pass

    def join(self) -> None:
        pass
