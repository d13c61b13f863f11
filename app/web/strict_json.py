"""Every JSON answer is strict JSON: no `NaN` or `Infinity`, which browsers cannot parse.

Python's `json` writes non-finite floats as the bare words `NaN` and `Infinity` by
default, and an uploaded file can hold such floats (a GGUF float metadata value, say).
The cores turn the ones they know of into None; this provider is the net under them.
"""

from __future__ import annotations

import math
from typing import Any

from flask.json.provider import DefaultJSONProvider


def finite(value: Any) -> Any:
    """`value` with every NaN or ±infinity inside lists, tuples and dicts replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON, with non-finite floats written as `null`.

    The common case costs nothing extra: the value is encoded once with `allow_nan=False`,
    and only a value that holds such a float is walked and encoded again.
    """

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        """`obj` as strict JSON (used for answers and by the `tojson` template filter)."""
        kwargs["allow_nan"] = False
        try:
            return super().dumps(obj, **kwargs)
        except ValueError:
            return super().dumps(finite(obj), **kwargs)
