"""Command lines that run a program with the playground's template: what every engine's
command lines share, and what writes them (`CommandWriter`: an engine's `commands`, or a
runtime the playground has no engine for).

A `CommandLine` is one way to run one program: its `form` (a template file, the template
inline, the environment...), the `command` and the files it reads from the current
directory. `CommandContext` is what they are written from. Facts every form rests on:

- One argv word or environment string is at most 128 KiB on Linux (MAX_ARG_STRLEN), and
  none can hold a NUL: the inline forms are left out for templates they cannot carry.
- Every word is quoted by `quote`: POSIX single quotes, safe to paste into a terminal.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.render.render_request import ModelFiles

TEMPLATE_FILE = "template.jinja"
GGUF_PLACEHOLDER = "MODEL.gguf"
HF_PLACEHOLDER = "ORG/MODEL"
DEFAULT_SERVER_URL = "http://localhost:8080"
#: Linux's MAX_ARG_STRLEN: the bytes of one argv word or "NAME=value", with its NUL.
MAX_ARGUMENT_BYTES = 128 * 1024
#: The conversation the snippets send when the caller gives none.
EXAMPLE_MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Hello!"}]


@dataclass(frozen=True)
class CommandLine:
    """One way to run `program` with the template."""

    program: str
    form: str
    command: str
    files: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """An entry of `/api/command` (the program under `engine`, as it always was)."""
        return {"engine": self.program, "form": self.form, "command": self.command,
                "files": self.files}  # fmt: skip


@dataclass(frozen=True)
class CommandContext:
    """What command lines are written from: the template, the kwargs and conversation a
    snippet sends, the model (a GGUF file or a Hugging Face id, each with a placeholder
    when the other kind is loaded), and `facts` the engines learnt by rendering the
    template (`CommandWriter.facts`)."""

    template: str
    kwargs: dict[str, Any]
    gguf: str = GGUF_PLACEHOLDER
    hf_id: str = HF_PLACEHOLDER
    messages: list[dict[str, Any]] = field(default_factory=lambda: list(EXAMPLE_MESSAGES))
    tools: list[dict[str, Any]] | None = None
    add_generation_prompt: bool = True
    special_tokens: dict[str, str] = field(default_factory=dict)
    server_url: str = DEFAULT_SERVER_URL
    facts: dict[str, Any] = field(default_factory=dict)
    #: The parser options chosen per engine id (`PlaygroundState.parsers`).
    parsers: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def for_model(cls, model: str | None, **fields: Any) -> CommandContext:
        """A context for `model`: a GGUF file name, or a Hugging Face id."""
        gguf = model if model and model.endswith(".gguf") else GGUF_PLACEHOLDER
        hf_id = model if model and not model.endswith(".gguf") else HF_PLACEHOLDER
        return cls(gguf=gguf, hf_id=hf_id, **fields)

    @property
    def kwargs_json(self) -> str | None:
        return compact_json(self.kwargs) if self.kwargs else None


#: A template's prompt for a conversation, by the reference engine (None when it fails).
Render = Callable[[list[dict[str, Any]], bool], "str | None"]


def no_facts(template: str, special_tokens: dict[str, str], render: Render) -> dict[str, Any]:
    """Nothing to learn of the template: the lines need only the context."""
    return {}


def no_model_facts(template: str, facts: dict[str, Any], model: ModelFiles) -> dict[str, Any]:
    """Nothing the loaded model changes in what the lines learnt."""
    return {}


def no_notes(facts: dict[str, Any]) -> dict[str, str]:
    """Nothing to say about the lines."""
    return {}


def no_findings(template: str) -> list[dict[str, Any]]:
    """Nothing the program's way of choosing a template finds wrong with this one."""
    return []


@dataclass(frozen=True)
class CommandWriter:
    """How one program's command lines are written."""

    #: Where its command lines come in the Command view, lowest first.
    rank: int
    #: The command lines that run its program with the context's template.
    lines: Callable[[CommandContext], list[CommandLine]]
    #: What its lines need to know of the template, learnt in a sandbox worker:
    #: `facts(template, special_tokens, render)`, where `render(messages,
    #: add_generation_prompt)` is the template's prompt by the reference engine (None
    #: when it fails). Its keys are part of `/api/command`'s answer.
    facts: Callable[[str, dict[str, str], Render], dict[str, Any]] = no_facts
    #: What the loaded model (`ModelFiles`, what its source says) changes in those facts:
    #: `model_facts(template, facts, model)`, the keys it sets replacing theirs (a program
    #: that picks its template by the model's architecture, say).
    model_facts: Callable[[str, dict[str, Any], ModelFiles], dict[str, Any]] = no_model_facts
    #: Sentences the Command view says about its lines, given what `facts` learnt, by a
    #: short key (`backquoted` parts are code).
    notes: Callable[[dict[str, Any]], dict[str, str]] = no_notes
    #: What the program's own choice of template does wrong with this one, as the
    #: analysis's diagnostics (`{"id", "severity", "message", "line"}` each), found in
    #: the analysis's sandbox worker: a runtime that swaps the template for another.
    findings: Callable[[str], list[dict[str, Any]]] = no_findings


#: Control characters a terminal paste can alter (a pasted CR arrives as LF, ESC starts a
#: key sequence): every C0 control but tab and newline, which a paste keeps, and DEL.
_UNPASTEABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
#: What the `printf '%b'` form writes as octal: every control (so the form is one line),
#: its own escape character, and "!", which an interactive bash would history-expand
#: inside the double quotes around the command substitution.
_PRINTF_ESCAPED = re.compile(r"[\x00-\x1f\x7f\\!]")


def quote(word: str) -> str:
    """`word` as one POSIX shell word that also survives being pasted into a terminal.

    Single quotes (`shlex.quote`) keep everything literal, `$`, backquotes, `!` and
    backslashes included (bash does no history expansion inside them). A word with
    control characters a paste would alter is written by `printf '%b'` instead, from a
    one-line copy where they (and newlines, backslashes and "!") are octal escapes: still
    POSIX, still one word, and one command substitution (dash crashes on words with a
    thousand). Command substitution strips trailing newlines: those follow in quotes.
    """
    if not _UNPASTEABLE.search(word):
        return shlex.quote(word)
    body = word.rstrip("\n")
    escaped = _PRINTF_ESCAPED.sub(lambda match: f"\\0{ord(match.group()):03o}", body)
    tail = word[len(body) :]
    return f"\"$(printf '%b' {shlex.quote(escaped)})\"" + (shlex.quote(tail) if tail else "")


def join(words: list[str]) -> str:
    return " ".join(quote(word) for word in words)


def compact_json(value: Any) -> str:
    """Compact JSON, non-ASCII kept readable unless it cannot be encoded (lone surrogates)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if _encodable(text) else json.dumps(value, separators=(",", ":"))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def fits_one_argument(text: str, overhead: int = 0) -> bool:
    """Whether `text` can be one argv word (or environment value) as it is."""
    if "\0" in text or not _encodable(text):
        return False
    return len(text.encode("utf-8")) + overhead + 1 <= MAX_ARGUMENT_BYTES


def assign(name: str, value: str) -> str:
    return f"{name}={quote(value)}"
