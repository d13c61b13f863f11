"""Variable paths as Inja uses them: `a.b.0` is the JSON pointer `/a/b/0`.

Reading follows nlohmann's `contains(ptr)`/`[ptr]` (objects by key, arrays by a decimal
index without leading zeros); writing (`{% set ns.x = ... %}`) follows its
`operator[](json_pointer)`, which creates what is missing on the way.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.edge_llm.inja.jsonvalue import JsonError


def pointer_parts(name: str) -> list[str]:
    """Inja's `convert_dot_to_ptr`: `a.b.c` is the JSON pointer `/a/b/c`."""
    parts = name.split(".")
    return parts[:-1] if len(parts) > 1 and parts[-1] == "" else parts


def pointer_get(root: Any, parts: list[str]) -> tuple[bool, Any]:
    """nlohmann's `contains(ptr)` and `[ptr]`: objects by key, arrays by decimal index."""
    current = root
    for part in parts:
        if isinstance(current, dict):
            if part not in current:
                return False, None
            current = current[part]
        elif isinstance(current, list):
            if not part.isdigit() or not part.isascii() or (len(part) > 1 and part[0] == "0"):
                return False, None
            if int(part) >= len(current):
                return False, None
            current = current[int(part)]
        else:
            return False, None
    return True, current


def _index(part: str) -> int:
    if not part.isascii() or not part.isdigit():
        raise JsonError(
            f"[json.exception.parse_error.109] parse error: array index '{part}' is not a number"
        )
    return int(part)


def _slot(container: Any, part: str) -> tuple[Any, Any]:
    """The container and key/index that nlohmann's pointer token `part` designates."""
    if isinstance(container, dict):
        return container, part
    if isinstance(container, list):
        index = _index(part)
        container.extend([None] * (index + 1 - len(container)))
        return container, index
    raise JsonError("[json.exception.type_error.313] invalid value to unflatten")


def descend(current: Any, part: str, next_part: str) -> Any:
    """Step into `current[part]`, creating it as nlohmann does when it is null or absent:
    an array when the next token is "0", else an object."""
    container, key = _slot(current, part)
    child = container.get(key) if isinstance(container, dict) else container[key]
    if child is None:
        child = [] if next_part == "0" else {}
        container[key] = child
    return child


def assign(current: Any, part: str, value: Any) -> None:
    """Store `value` at token `part` of `current`, as the last step of a pointer write."""
    container, key = _slot(current, part)
    container[key] = value
