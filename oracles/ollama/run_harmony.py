"""Runners of Ollama's harmony parser tests (harmony/harmonyparser_test.go)."""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama.parsers import harmony

#: Our event kinds as the Go test's event types.
_EVENTS = {
    "start": "HarmonyEventMessageStart",
    "header": "HarmonyEventHeaderComplete",
    "content": "HarmonyEventContentEmitted",
    "end": "HarmonyEventMessageEnd",
}


def as_go(event: tuple[str, ...]) -> dict[str, Any]:
    """One of our events in the shape the recorder gives the Go test's events."""
    out: dict[str, Any] = {"event": _EVENTS[event[0]]}
    if event[0] == "header":
        out["Header"] = {"role": event[1], "Channel": event[2], "Recipient": event[3]}
    elif event[0] == "content":
        out["content"] = event[1]
    return out


def _splitter(implicit: bool) -> harmony.Splitter:
    """A splitter, started inside an assistant message when the test says so."""
    splitter = harmony.Splitter()
    if implicit:
        splitter.add_implicit_start()
    return splitter


def header(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestHeaderParsing: a header's role, channel and recipient."""
    want = (fields["wantRole"], fields["wantChannel"], fields["wantRecipient"])
    return harmony.parse_header(fields["in"]), want


def header_event(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestHarmonyParserHeaderEvent: the first header a text completes."""
    events = _splitter(bool(fields.get("implicitStart"))).add(fields["in"])
    first = next((e[1:] for e in events if e[0] == "header"), None)
    return first, (fields["wantRole"], fields["wantChannel"], fields["wantRecipient"])


def non_streaming(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestHarmonyParserNonStreaming: the events of a whole text."""
    events = _splitter(bool(fields.get("implicitStart"))).add(fields["in"])
    return [as_go(e) for e in events], fields["wantEvents"]


def streaming(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestHarmonyParserStreaming: the events after each step."""
    splitter = _splitter(bool(fields.get("implicitStart")))
    got = [[as_go(e) for e in splitter.add(step["input"])] for step in fields["steps"]]
    return got, [step["wantEvents"] or [] for step in fields["steps"]]


def valid_chars(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestFunctionConvertToValidChars."""
    return harmony.valid_chars(fields["in"]), fields["want"]


def convert_and_add(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestFunctionConvertAndAdd: the names given in turn, and both maps after each."""
    names = harmony.FunctionNames()
    got = []
    for name in fields["in"]:
        given = names.add(name)
        got.append((given, names.to_harmony[name], names.to_user[given]))
    want = [(w, w, name) for name, w in zip(fields["in"], fields["want"], strict=True)]
    return got, want
