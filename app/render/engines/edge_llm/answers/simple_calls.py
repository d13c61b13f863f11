"""A Python call line read without Python's parser when its arguments are plain: what
`calls._python_calls` tries first.

Edge-LLM reads a call line with a regular expression, its arguments with `ast.parse` and
`ast.literal_eval`, and writes them with `json.dumps`: some 20 µs a line, so 100 kB of
call lines took 60 ms. Most lines are plain, `name(key="text", n=12)` (True, False and
None too): `simple_call` reads those with one expression to the same name and the same
arguments text. Anything else (escapes, other literals, control characters, a keyword
as a name, blanks other than spaces and tabs) it leaves to the full reading: None.
"""

from __future__ import annotations

import re
from keyword import iskeyword

#: A string's characters that need no reading: no quote of its kind, no backslash, no
#: control character (Python's parser refuses NUL, and `str.splitlines` cuts at several),
#: no surrogate (Python's parser cannot encode one), no line or paragraph separator.
_PLAIN = r"[^{quote}\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]*"
_VALUE = "|".join(
    (
        '"' + _PLAIN.format(quote='"') + '"',
        "'" + _PLAIN.format(quote="'") + "'",
        r"-?(?:0|[1-9][0-9]{0,17})",  # no leading zeros, far from int's digit limit
        "True",
        "False",
        "None",
    )
)
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ARGUMENT = rf"[ \t]*{_NAME}[ \t]*=[ \t]*(?:{_VALUE})[ \t]*"
#: A whole line `name(key=value, ...)`, a trailing comma allowed inside and after: its
#: last ")" is the one the arguments end at, as Edge-LLM's expression takes it.
_LINE = re.compile(rf"[ \t]*({_NAME})\(((?:{_ARGUMENT},)*{_ARGUMENT},?[ \t]*)\)[ \t]*,?[ \t]*")
#: A line of one keyword argument, the commonest, its name, key and value taken at once.
_ONE = re.compile(
    rf"[ \t]*({_NAME})\([ \t]*({_NAME})[ \t]*=[ \t]*({_VALUE})[ \t]*,?[ \t]*\)[ \t]*,?[ \t]*"
)
#: One keyword argument of a line `_LINE` took.
_KEYWORD = re.compile(rf"[ \t]*({_NAME})[ \t]*=[ \t]*({_VALUE})")
#: How `json.dumps` writes True, False and None.
_CONSTANTS = {"True": "true", "False": "false", "None": "null"}


def simple_call(line: str) -> tuple[str, str] | None:
    """(name, arguments as JSON text) of a plain call line, exactly as the full reading
    gives them (`python_call`, `python_arguments`, `arguments_json`): a later repeat of a
    key wins, in the first one's place. None for any other line."""
    one = _ONE.fullmatch(line)
    if one is not None:
        name, key, value = one.groups()
        if iskeyword(key):
            return None  # Python's parser refuses it
        return name, f'{{"{key}": {_json(value)}}}'
    found = _LINE.fullmatch(line)
    if found is None:
        return None
    arguments: dict[str, str] = {}
    for key, value in _KEYWORD.findall(found.group(2)):
        if iskeyword(key):
            return None
        arguments[key] = _json(value)
    return found.group(1), "{" + ", ".join([f'"{k}": {v}' for k, v in arguments.items()]) + "}"


def _json(literal: str) -> str:
    """A literal `_VALUE` took, as `json.dumps(..., ensure_ascii=False)` writes its value:
    of a plain string's characters only `"` needs escaping."""
    if literal[0] == '"':
        return literal
    if literal[0] == "'":
        return '"' + literal[1:-1].replace('"', '\\"') + '"'
    return _CONSTANTS.get(literal) or str(int(literal))
