"""One case of the Hugging Face fuzzer: its files while they are mutated, and how they are sent.

The files stay parsed JSON values (or a template's text) while the structured mutations
work on them; `Case.parts` writes them out, and the byte-level and multipart mutations
work on what is written. A value can stand in for JSON text that Python's `json` would
never write (a key twice, a million brackets): `Case.fragment` gives a placeholder string
that `Case.parts` replaces with the text.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: Children of a list or object looked at when picking a node: a vocabulary of a million
#: entries is sampled, not walked.
SAMPLED_CHILDREN = 6
TOKENIZER, CONFIG = "tokenizer.json", "tokenizer_config.json"


@dataclass
class Part:
    """One multipart file: the form field, the file name, the bytes."""

    field: str
    name: str | None  # None: a form field, not a file
    data: bytes


@dataclass
class Probe:
    """A text to tokenize with a source that loads, and the flags to send."""

    text: str
    add_special: bool = True
    parse_special: bool = True


@dataclass
class Case:
    """The files of one case, the texts to tokenize with them, and what was done to them."""

    docs: dict[str, Any]
    probes: list[Probe] = field(default_factory=list)
    fragments: dict[str, str] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    #: Where to cut the multipart body (a fraction of it), if at all.
    cut_body: float | None = None

    def fragment(self, text: str) -> str:
        """A placeholder value that is written as the JSON text `text`."""
        marker = f"\x00fragment{len(self.fragments)}\x00"
        self.fragments[marker] = text
        return marker

    def encode(self, name: str) -> bytes:
        """File `name` as it is sent: JSON (fragments in place) or a template's text."""
        value = self.docs[name]
        if name.endswith(".jinja") and isinstance(value, str):
            return value.encode("utf-8", "surrogatepass")
        text = json.dumps(value, ensure_ascii=False)
        # Later fragments may hold earlier ones' markers (a key written twice around one).
        for marker, fragment in reversed(self.fragments.items()):
            text = text.replace(json.dumps(marker, ensure_ascii=False), fragment)
        return text.encode("utf-8", "surrogatepass")

    def parts(self) -> list[Part]:
        """Every file as a multipart part, as the page sends them (fields file0, file1...)."""
        return [Part(f"file{i}", name, self.encode(name)) for i, name in enumerate(self.docs)]


def multipart(parts: list[Part], rng: random.Random) -> tuple[bytes, str]:
    """The body and content type of a multipart upload of `parts`."""
    boundary = f"fuzz{rng.getrandbits(96):024x}"
    body = bytearray()
    for part in parts:
        quoted = (part.name or "").replace("\\", "\\\\").replace('"', '\\"')
        named = "" if part.name is None else f'; filename="{quoted}"'
        body += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{part.field}"{named}\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode("utf-8", "surrogateescape")  # a name may stand for bytes that are not UTF-8
        body += part.data + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    return bytes(body), f"multipart/form-data; boundary={boundary}"


# --------------------------------------------------------------------------- JSON paths


def pick(rng: random.Random, values: list[Any]) -> Any:
    """A copy of one of `values`: a module's list or object, put in a case as it is, would
    be changed by the case's next mutation, for every later case (or made to hold itself)."""
    return copy.deepcopy(rng.choice(values))


Path = tuple[Any, ...]


def nodes(value: Any, rng: random.Random, path: Path = ()) -> Iterator[Path]:
    """Paths of `value`'s nodes (itself first); large containers are sampled."""
    yield path
    if isinstance(value, dict):
        keys = list(value)
    elif isinstance(value, list):
        keys = list(range(len(value)))
    else:
        return
    if len(keys) > SAMPLED_CHILDREN:
        keys = rng.sample(keys, SAMPLED_CHILDREN)
    for key in keys:
        yield from nodes(value[key], rng, (*path, key))


def get(value: Any, path: Path) -> Any:
    for key in path:
        value = value[key]
    return value


def put(doc: Any, path: Path, new: Any) -> Any:
    """`doc` with the node at `path` replaced by `new` (the new root when `path` is empty)."""
    if not path:
        return new
    get(doc, path[:-1])[path[-1]] = new
    return doc


def pick_node(value: Any, rng: random.Random) -> Path:
    """A node of `value`: half the time one of the first three levels, where the
    structure is, else any (sampled) node."""
    found = list(nodes(value, rng))
    shallow = [path for path in found if len(path) <= 2]
    return rng.choice(shallow if shallow and rng.random() < 0.5 else found)
