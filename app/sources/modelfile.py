"""An Ollama Modelfile, read as Ollama's own parser reads it (`ollama show --modelfile`'s
output, or one a user wrote for `ollama create`).

The grammar is Ollama's `parser/parser.go` (`ParseFile`), read at ollama/ollama commit
fb30760996871fa9460115c753afd2c60d4ab0f7; these are its facts, in our own code:

- A line is blank, a comment (`#` where a command could start, to the end of the line),
  or a command: a name of ASCII letters (any case) ended by a space or tab, then its
  value. The names are FROM, TEMPLATE, SYSTEM, PARAMETER, MESSAGE, RENDERER, PARSER,
  LICENSE, ADAPTER, DRAFT, REQUIRES. PARAMETER is followed by a parameter name (letters,
  digits, `_`) and a space; MESSAGE by a role (system, user or assistant) and a space.
- A value runs to the end of its line, unless it opens a quote: `\"\"\"...\"\"\"` or
  `"..."` may span lines, and the value ends at the first line end after which the
  whole (trimmed) value is one closed quote; the quotes are taken off, what is inside
  is kept as it is. A value that opens a quote it never closes is an error.
- Only printable characters are kept (Go's `strconv.IsPrint`), besides spaces, tabs
  and the line ends inside a quoted value: a control character or a zero-width or
  non-ASCII space vanishes from a TEMPLATE as Ollama reads it.
- A Modelfile must have a FROM line. The last TEMPLATE, SYSTEM, RENDERER and PARSER
  count; every PARAMETER stop adds a stop sequence.

One difference: Ollama counts a CRLF line end as two lines in its error messages; the
errors here name the line as an editor shows it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

#: Commands by their lower-case name (FROM is recorded as "model", as Ollama does).
COMMANDS = frozenset(
    {"from", "license", "template", "system", "adapter", "draft", "renderer", "parser",
     "parameter", "message", "requires"}
)  # fmt: skip
#: Roles a MESSAGE may have.
ROLES = frozenset({"system", "user", "assistant"})
#: What the error for an unknown command lists.
_COMMAND_LIST = (
    "FROM, TEMPLATE, SYSTEM, PARAMETER, MESSAGE, RENDERER, PARSER, LICENSE, ADAPTER, DRAFT"
    " or REQUIRES"
)
_SPACES, _NEWLINES = " \t", "\r\n"
_PRINTABLE_CLASSES = frozenset("LMNPS")


@dataclass(frozen=True)
class ModelfileLimits:
    """What one Modelfile may hold; each has a `PLAYGROUND_*` setting."""

    #: Bytes of the whole text (`PLAYGROUND_MODELFILE_KB`).
    max_bytes: int = 1 << 20
    #: Commands (FROM, PARAMETER, MESSAGE ... lines) in all (`PLAYGROUND_MODELFILE_COMMANDS`).
    max_commands: int = 1000


@dataclass
class ModelfileError(Exception):
    """A Modelfile that cannot be read: what is wrong and on which line (None: the whole
    file), and the limit it ran into, if that is why. (Not frozen: Python sets
    `__traceback__`.)"""

    message: str
    line: int | None = None
    limit: str | None = None

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message

    def __reduce__(self) -> tuple:
        return (type(self), (self.message, self.line, self.limit))


@dataclass(frozen=True)
class Command:
    """One command: its lower-case name ("model" for FROM, the parameter's own name for
    a PARAMETER), its value, and the line it starts on."""

    name: str
    args: str
    line: int


@dataclass(frozen=True)
class OllamaModel:
    """What a Modelfile (or a registry manifest's layers) says of a model's prompt."""

    model_from: str | None = None
    template: str | None = None
    system: str | None = None
    #: Every `PARAMETER stop`, in order.
    stop: tuple[str, ...] = ()
    #: The other parameters as written: name -> values (several for a repeated one).
    parameters: dict[str, list[str]] = field(default_factory=dict)
    renderer: str | None = None
    parser: str | None = None
    #: MESSAGE commands: (role, content).
    messages: tuple[tuple[str, str], ...] = ()
    #: The model's family (a registry config's `model_family`; None: not known, as for a
    #: Modelfile, whose FROM model says it).
    family: str | None = None
    #: The capabilities a registry config lists (none for a Modelfile).
    capabilities: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """What the API shows of it (the template is the source's, not repeated here)."""
        return {
            "from": self.model_from,
            "system": self.system,
            "stop": list(self.stop),
            "parameters": self.parameters,
            "renderer": self.renderer,
            "parser": self.parser,
            "messages": [{"role": role, "content": text} for role, text in self.messages],
            "family": self.family,
            "capabilities": list(self.capabilities),
        }


def decode(data: bytes, limits: ModelfileLimits) -> str:
    """A Modelfile's bytes as text: UTF-8 (a leading byte-order mark dropped), or UTF-16
    with its byte-order mark, as Ollama decodes it; invalid bytes become U+FFFD."""
    if len(data) > limits.max_bytes:
        raise ModelfileError(
            f"the Modelfile holds {len(data):,} bytes; at most {limits.max_bytes:,} are read"
            " (PLAYGROUND_MODELFILE_KB)",
            limit="modelfile_kb",
        )
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def is_print(char: str) -> bool:
    """Go's `strconv.IsPrint`: a letter, mark, number, punctuation or symbol, or the
    ASCII space."""
    return char == " " or unicodedata.category(char)[0] in _PRINTABLE_CLASSES


def unquote(value: str) -> str | None:
    """A value without its quotes (`\"\"\"x\"\"\"`, `"x"`), as it is when unquoted; None
    while a quote it opens is not closed."""
    if value.startswith('"""'):
        return value[3:-3] if len(value) >= 6 and value.endswith('"""') else None
    if value.startswith('"'):
        return value[1:-1] if len(value) >= 2 and value.endswith('"') else None
    return value


def parse(text: str, limits: ModelfileLimits | None = None) -> list[Command]:
    """The commands of a Modelfile, in order; `ModelfileError` naming the line."""
    return _Reader(text, limits or ModelfileLimits()).commands()


def read_modelfile(data: bytes, limits: ModelfileLimits | None = None) -> OllamaModel:
    """A Modelfile's bytes read into the model it describes."""
    limits = limits or ModelfileLimits()
    return model_of(parse(decode(data, limits), limits))


def model_of(commands: list[Command]) -> OllamaModel:
    """What the commands say, as `ollama create` takes them: the last TEMPLATE, SYSTEM,
    RENDERER and PARSER; every stop; a FROM is required."""
    if not any(command.name == "model" for command in commands):
        raise ModelfileError("the Modelfile has no FROM line (Ollama requires one)")
    single: dict[str, str] = {}
    parameters: dict[str, list[str]] = {}
    messages = []
    for command in commands:
        if command.name == "message":
            role, _, content = command.args.partition(": ")
            messages.append((role, content))
        elif command.name in _SINGLE:
            single[command.name] = command.args
        elif command.name not in _IGNORED:
            parameters.setdefault(command.name, []).append(command.args)
    stop = tuple(parameters.pop("stop", []))
    return OllamaModel(
        model_from=single.get("model"),
        template=single.get("template"),
        system=single.get("system"),
        stop=stop,
        parameters=parameters,
        renderer=single.get("renderer"),
        parser=single.get("parser"),
        messages=tuple(messages),
    )


#: Commands whose last value counts.
_SINGLE = frozenset({"model", "template", "system", "renderer", "parser"})
#: Commands that say nothing of the prompt (files, a licence, a version).
_IGNORED = frozenset({"license", "adapter", "draft", "requires"})


class _Reader:
    """One pass over a Modelfile's characters, in the states of Ollama's parser."""

    def __init__(self, text: str, limits: ModelfileLimits) -> None:
        self.text, self.limits = text, limits
        self.at, self.line = 0, 1
        self.found: list[Command] = []

    def commands(self) -> list[Command]:
        """Every command, each checked against the limits as it is read."""
        while self._skip_blanks_and_comments():
            self.found.append(self._command())
            if len(self.found) > self.limits.max_commands:
                raise ModelfileError(
                    f"the Modelfile has more than {self.limits.max_commands:,} commands"
                    " (PLAYGROUND_MODELFILE_COMMANDS)",
                    self.found[-1].line,
                    "modelfile_commands",
                )
        return self.found

    def _next(self) -> str:
        char = self.text[self.at]
        self.at += 1
        if char == "\n" or (char == "\r" and self.text[self.at : self.at + 1] != "\n"):
            self.line += 1
        return char

    def _skip_blanks_and_comments(self) -> bool:
        """Move to the start of the next command; False at the end of the text."""
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == "#":
                while self.at < len(self.text) and self.text[self.at] not in _NEWLINES:
                    self._next()
            elif char in _SPACES or char in _NEWLINES:
                self._next()
            else:
                return True
        return False

    def _word(self, allowed: str, *, first_any: bool = False) -> tuple[str, str | None]:
        """Characters while they are ASCII letters (and `allowed` others), and the one
        that ended them (None at the end of the text). A command's first character is
        taken whatever it is (`first_any`), as Ollama's parser does; only printable ones
        are kept."""
        word = [self._next()] if first_any else []
        while self.at < len(self.text):
            char = self._next()
            if not (char.isascii() and (char.isalpha() or char in allowed)):
                return "".join(c for c in word if is_print(c)), char
            word.append(char)
        return "".join(c for c in word if is_print(c)), None

    def _command(self) -> Command:
        start = self.line
        name, end = self._word("", first_any=True)
        if end not in (None, *_SPACES) or name.lower() not in COMMANDS:
            shown = name if end in (None, *_SPACES) else name + (end or "")
            raise ModelfileError(
                f"{shown[:40]!r} is not a Modelfile command: a command is one of"
                f" {_COMMAND_LIST}, followed by a space",
                start,
            )
        if end is None:
            raise self._cut(name)
        name = name.lower()
        if name == "parameter":
            name = self._qualifier("parameter", "PARAMETER needs a name (PARAMETER stop ...)")
        elif name == "message":
            role = self._qualifier("message", "MESSAGE needs a role (MESSAGE user ...)")
            return Command("message", f"{role}: {self._value()}", start)
        return Command("model" if name == "from" else name, self._value(), start)

    def _qualifier(self, command: str, missing: str) -> str:
        """The word after PARAMETER (its name) or MESSAGE (its role)."""
        if self.at >= len(self.text):
            raise self._cut(command.upper())
        line = self.line
        word, end = self._word("_0123456789" if command == "parameter" else "")
        if end is None:
            raise self._cut(command.upper())
        if end in _NEWLINES:
            form = "PARAMETER NAME VALUE" if command == "parameter" else "MESSAGE ROLE TEXT"
            raise ModelfileError(f"{command.upper()} {word[:40]} has no value: {form}", line)
        if end not in _SPACES:
            what = (
                "parameter name is letters, digits and _"
                if command == "parameter"
                else "message role is letters"
            )
            raise ModelfileError(
                f"{command.upper()} {word[:40]}{end!r}: a {what}, then a space", line
            )
        if command == "message" and word not in ROLES:
            raise ModelfileError(
                f"MESSAGE {word[:40]!r}: a message's role is system, user or assistant",
                line,
            )
        if not word:
            raise ModelfileError(missing, line)
        return word

    def _value(self) -> str:
        """A command's value: to the end of its line, or of its closed quote."""
        start = self.line
        kept: list[str] = []
        while self.at < len(self.text):
            char = self._next()
            if char in _NEWLINES:
                value = unquote("".join(kept).strip())
                if value is not None:
                    return value
                kept.append(char)
            elif char in _SPACES or is_print(char):
                kept.append(char)
        value = unquote("".join(kept).strip())
        if value is None:
            raise ModelfileError('this value opens a quote (""" or ") that is never closed', start)
        return value

    def _cut(self, command: str) -> ModelfileError:
        return ModelfileError(f"the Modelfile ends inside a {command} command", self.line)
