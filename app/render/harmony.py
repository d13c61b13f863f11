"""OpenAI's Harmony format (gpt-oss) read back from completion text.

A gpt-oss model answers in messages: `<|start|>` role and header `<|message|>` content,
closed by `<|end|>`, `<|call|>` (a tool call) or `<|return|>` (the turn is over). The
header names the channel (`<|channel|>analysis`, `commentary`, `final`), the recipient
(`to=functions.get_weather`, before or after the channel) and the content type
(`json`, `<|constrain|>json`, `code`). The prompt ends in `<|start|>assistant`, so a
completion starts in the header of its first message.

This reproduces the `openai-harmony` package's parser (0.0.8, `StreamableParser` and
`parse_messages_from_completion_tokens`) on text: the special tokens are the markers as
they stand in the text, everything else is plain text. It raises `HarmonyError` where
the package does, with its messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

#: The Harmony special tokens by name (o200k_harmony); `<|reserved_N|>` are special too.
START, END, MESSAGE, CHANNEL = "<|start|>", "<|end|>", "<|message|>", "<|channel|>"
CONSTRAIN, RETURN, CALL = "<|constrain|>", "<|return|>", "<|call|>"
NAMED_SPECIALS = frozenset(
    {START, END, MESSAGE, CHANNEL, CONSTRAIN, RETURN, CALL}
    | {"<|startoftext|>", "<|endoftext|>", "<|endofprompt|>"}
)
#: The tokens that close a message (the encoding's stop formatting tokens).
STOP_TOKENS = frozenset((RETURN, CALL, END))
#: The reserved ids o200k_harmony names `<|reserved_N|>`.
RESERVED_IDS = range(200000, 201089)
#: The roles Harmony knows by name.
ROLES = ("user", "assistant", "system", "developer", "tool")
#: The longest special token's length, which bounds the search for its closing `|>`.
_LONGEST_SPECIAL = len("<|reserved_201088|>")
#: Rust's `char::is_whitespace` (Unicode White_Space), which Python's `isspace` is not.
_RUST_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
#: Rust's `split_ascii_whitespace` separators (no vertical tab).
_ASCII_WHITESPACE = " \t\n\x0c\r"


class HarmonyError(ValueError):
    """The package's `HarmonyError`: the completion is not Harmony as it reads it."""


@dataclass(frozen=True)
class HarmonyMessage:
    """One parsed message, with the package's fields."""

    role: str
    text: str
    #: The author's name: the tool's name for a tool's message, else None.
    name: str | None = None
    channel: str | None = None
    recipient: str | None = None
    content_type: str | None = None

    def to_json(self) -> dict:
        """The message as the package's `Message.to_dict()` has it (text content only)."""
        out: dict = {"role": self.role, "name": self.name}
        out["content"] = [{"type": "text", "text": self.text}]
        for key in ("channel", "recipient", "content_type"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def is_special(piece: str) -> bool:
    """Whether `piece` is one whole Harmony special token."""
    if piece in NAMED_SPECIALS:
        return True
    if piece.startswith("<|reserved_") and piece.endswith("|>"):
        digits = piece[len("<|reserved_") : -2]
        return digits.isascii() and digits.isdigit() and int(digits) in RESERVED_IDS
    return False


def pieces(text: str) -> Iterator[str]:
    """`text` cut into special tokens and the plain text between them, as the encoder
    does with every special token allowed (linear: each `<|` looks a bounded way on)."""
    start = at = 0
    while (at := text.find("<|", at)) != -1:
        close = text.find("|>", at + 2, at + _LONGEST_SPECIAL)
        if close != -1 and is_special(text[at : close + 2]):
            if at > start:
                yield text[start:at]
            yield text[at : close + 2]
            start = at = close + 2
        else:
            at += 2
    if start < len(text):
        yield text[start:]


def _rust_trim(text: str) -> str:
    return text.strip("".join(_RUST_WHITESPACE))


def _split_ascii(text: str) -> list[str]:
    parts, word = [], []
    for char in text:
        if char in _ASCII_WHITESPACE:
            if word:
                parts.append("".join(word))
                word = []
        else:
            word.append(char)
    if word:
        parts.append("".join(word))
    return parts


@dataclass(frozen=True)
class Header:
    role: str
    name: str | None
    recipient: str | None
    channel: str | None
    content_type: str | None


def parse_header(header: str, role: str | None, with_metadata: bool) -> tuple[Header, str | None]:
    """The header's fields and any words left over (the package's header parser):
    the channel is the word after `<|channel|>`; the last word is the recipient when it
    starts with `to=` or stands alone, else the content type after a recipient."""
    channel = None
    if (idx := header.find(CHANNEL)) != -1:
        after = header[idx + len(CHANNEL) :]
        end = next((i for i, c in enumerate(after) if c in _RUST_WHITESPACE or c == "<"), None)
        end = len(after) if end is None else end
        if end == 0:
            raise HarmonyError("channel marker present but no channel value found in header")
        channel = after[:end]
        header = header[:idx] + after[end:]
    header = _rust_trim(header)
    if CONSTRAIN in header:
        # A constrained format glued to the recipient still reads as its own word.
        header = _rust_trim(header.replace(CONSTRAIN, " " + CONSTRAIN))
    parts = _split_ascii(header)
    role_word = None
    if role is None:
        if not parts:
            raise HarmonyError("message header did not contain a role")
        role_word = parts[0]
        if role_word in ROLES:
            role = role_word
        elif len(parts) > 1 or role_word.startswith("to="):
            parts.pop(0)  # an unknown author with a recipient is a tool
            role = "tool"
        else:
            raise HarmonyError(f"Unknown role: {role_word}")
    if parts and parts[0] == role:
        parts.pop(0)
    recipient = content_type = None
    if with_metadata and parts:
        count, last = len(parts), parts.pop()
        if last.startswith("to="):
            recipient = last[3:]
        elif count == 1:
            recipient = last
        else:
            content_type = last
            if parts:
                raw = parts.pop()
                recipient = raw[3:] if raw.startswith("to=") else raw
    rest = " ".join(parts) if parts else None
    name = role_word if role == "tool" else None
    return Header(role, name, recipient, channel, content_type), rest


@dataclass
class HarmonyParser:
    """The package's `StreamableParser`, fed pieces of text (`pieces`) for tokens."""

    #: The role of the first message when the prompt already opened it, else None.
    role: str | None = "assistant"
    #: False: a message closed before its `<|message|>` keeps its header as content.
    strict: bool = True
    messages: list[HarmonyMessage] = field(default_factory=list)
    _state: str = "header"
    _buffer: list[str] = field(default_factory=list)
    _header: Header | None = None

    def __post_init__(self) -> None:
        self._state = "header" if self.role is not None else "start"

    def process(self, piece: str) -> None:
        """Take one token (a special token, or a run of plain text)."""
        if self._state == "start":
            if piece != START:
                raise HarmonyError(f"Unexpected token {piece!r} while expecting start token")
            self._state, self._buffer = "header", []
        elif self._state == "header":
            if piece == MESSAGE:
                self._state = "start"  # where an unreadable header leaves it
                header, rest = parse_header("".join(self._buffer), self.role, True)
                if rest is not None:
                    words = json.dumps(rest, ensure_ascii=False)  # Rust's Debug of Some(String)
                    raise HarmonyError(
                        f"unexpected tokens remaining in message header: Some({words})"
                    )
                self.role, self._header = None, header
                self._state, self._buffer = "content", []
            elif not self.strict and piece in STOP_TOKENS:
                if self.role is not None and self._buffer:
                    header, rest = parse_header("".join(self._buffer), self.role, False)
                    self.messages.append(_message(header, rest or ""))
                self._state, self.role = "start", None
            else:
                self._buffer.append(piece)
        elif piece in STOP_TOKENS:
            self._finish()
        else:
            self._buffer.append(piece)

    def process_eos(self) -> None:
        """The end of the completion: closes a message whose content is open."""
        if self._state == "header":
            raise HarmonyError("Unexpected EOS while waiting for message header to complete")
        if self._state == "content":
            self._finish()

    def _finish(self) -> None:
        assert self._header is not None
        self.messages.append(_message(self._header, "".join(self._buffer)))
        self._state, self._buffer = "start", []


def _message(header: Header, text: str) -> HarmonyMessage:
    return HarmonyMessage(
        header.role, text, header.name, header.channel, header.recipient, header.content_type
    )


def parse_messages(
    text: str, role: str | None = "assistant", strict: bool = True
) -> list[HarmonyMessage]:
    """The package's `parse_messages_from_completion_tokens(encode(text), role)`."""
    parser = HarmonyParser(role=role, strict=strict)
    for piece in pieces(text):
        parser.process(piece)
    parser.process_eos()
    return parser.messages
