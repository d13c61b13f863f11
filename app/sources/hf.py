"""Templates and special tokens from Hugging Face tokenizer files, read as transformers reads them.

Accepted files: `tokenizer_config.json` (`chat_template` as a string or a list of
`{name, template}`; special tokens as strings or AddedToken objects, the seven standard
ones and any the model names, such as Gemma 3's `image_token`; `add_bos_token`,
`add_eos_token`), `chat_template.jinja`, other `*.jinja` files (named templates, as in
`additional_chat_templates/`), the legacy `chat_template.json`, and `tokenizer.json`.
The templates are the tokenizer's (`AutoTokenizer`): template files take priority over the
config's `chat_template`, and `chat_template.json` is left out, as in transformers; a
processor reads that one, so it is offered as the template `processor`.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from app.untrusted_json import DEFAULT_MAX_DEPTH, JSONRefused, loads

#: Special-token attributes of a transformers tokenizer, as they appear in its config.
SPECIAL_TOKEN_NAMES = (
    "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
)  # fmt: skip

#: The name under which a legacy `chat_template.json`'s template is offered: transformers'
#: processor (`AutoProcessor` with a processor class) uses it, its tokenizer never does.
PROCESSOR_TEMPLATE = "processor"

#: Files this reader understands; anything else is refused by name.
KNOWN_JSON_FILES = ("tokenizer_config.json", "chat_template.json", "tokenizer.json")


@dataclass
class HFFileError(Exception):
    """A file that cannot be read, named; `limit` names the limit it ran into, if that is
    why. (Not frozen: Python sets `__traceback__`.)"""

    file: str
    message: str
    limit: str | None = None

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"

    def __reduce__(self) -> tuple:
        return (type(self), (self.file, self.message, self.limit))


@dataclass
class HFSource:
    """What the uploaded files say: templates, special tokens, BOS/EOS flags, tokenizer.json."""

    templates: dict[str, str] = field(default_factory=dict)
    special_tokens: dict[str, str] = field(default_factory=dict)
    add_bos_token: bool | None = None
    add_eos_token: bool | None = None
    tokenizer_json: str | None = None
    tokenizer_config: dict[str, Any] = field(default_factory=dict)


#: A JSON file that holds something else than an object (a list, a string, no JSON).
_NOT_AN_OBJECT = "this file does not hold a JSON object (one that starts with '{')"

#: A JSON object file that does not end as one does.
CUT_SHORT = "this file ends before its JSON object does (is it complete?)"

#: Control characters JSON writes escaped (as `json` does with ensure_ascii=False), besides
#: `"` and backslashes; in UTF-8 none of these bytes is ever part of a longer character.
_CONTROLS = {b"\n": b"\\n", b"\r": b"\\r", b"\t": b"\\t", b"\b": b"\\b", b"\f": b"\\f"}
_OTHER_CONTROLS = re.compile(rb"[\x00-\x1f]")
#: Every byte but those (`bytes.translate` deletes them, leaving the controls).
_NOT_CONTROLS = bytes(range(0x20, 0x100))
_CHECKED_BYTES = 1 << 20


def is_utf8(data: bytes) -> bool:
    """Whether `data` is UTF-8 text, checked a mebibyte at a time: decoded whole, a file
    with one character outside the BMP would take four bytes a character."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), _CHECKED_BYTES):
            decoder.decode(view[start : start + _CHECKED_BYTES])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _json_string(text: bytes) -> bytes:
    text = text.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    for control, escaped in _CONTROLS.items():
        text = text.replace(control, escaped)
    if not text.translate(None, _NOT_CONTROLS):
        # No other control byte, as in every real file (deleting all other bytes leaves
        # nothing): the regex's scan for them took a third of this on a 33 MB file.
        return b'"' + text + b'"'
    return b'"' + _OTHER_CONTROLS.sub(lambda m: b"\\u%04x" % m[0][0], text) + b'"'


def canonical_files(files: Mapping[str, bytes]) -> bytes:
    """The stored form of uploaded files (name -> UTF-8 text), whose SHA-256 is the
    source's id: byte for byte `json.dumps(texts, sort_keys=True, ensure_ascii=False)`,
    written without decoding the texts (that cost the web process ten copies of a file
    with one character outside the BMP)."""
    items = [
        json.dumps(name, ensure_ascii=False).encode() + b": " + _json_string(files[name])
        for name in sorted(files)
    ]
    return b"{" + b", ".join(items) + b"}"


def _load_json(name: str, text: str, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    try:
        return loads(text, max_depth)
    except JSONRefused as error:
        raise HFFileError(name, error.message) from None


def check_json(name: str, text: str) -> None:
    """Raise `HFFileError` if `text` is not JSON (for a file read some other way first)."""
    _load_json(name, text)


def _token_text(value: Any) -> str | None:
    """A special token given as a string or as an AddedToken object (`{"content": ...}`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _added_token_text(value: Any) -> str | None:
    """A token beyond the seven named ones, as transformers takes it: a string, or an
    AddedToken as `save_pretrained` writes one (anything else it leaves out or refuses)."""
    if isinstance(value, str):
        return value
    if (
        isinstance(value, Mapping)
        and value.get("__type") == "AddedToken"
        and isinstance(value.get("content"), str)
    ):
        return value["content"]
    return None


def special_tokens_from_config(config: Mapping[str, Any]) -> dict[str, str]:
    """The tokenizer's `special_tokens_map` (transformers 5), every entry of which is a
    template variable: the seven standard names, then any other `*_token` key holding a
    token (Gemma 3's `boi_token`, `eoi_token`, `image_token`), then the entries of
    `extra_special_tokens` when it maps names to tokens (they win over the config's own).
    `extra_special_tokens` as a list names no token, so it adds no variable."""
    named = {}
    for name in SPECIAL_TOKEN_NAMES:
        if (token := _token_text(config.get(name))) is not None:
            named[name] = token
    # transformers takes string values first and AddedTokens later, at which point the
    # strings win; a name keeps the place it was first given.
    objects, strings = {}, {}
    for key, value in config.items():
        if key in SPECIAL_TOKEN_NAMES or not key.endswith("_token"):
            continue
        if isinstance(value, str):
            strings[key] = value
        elif (token := _added_token_text(value)) is not None:
            objects[key] = token
    extra = config.get("extra_special_tokens")
    if not extra:  # the older name, read only when the newer one is empty
        extra = config.get("additional_special_tokens")
    if isinstance(extra, Mapping):
        for key, value in extra.items():
            if (token := _added_token_text(value)) is not None:
                strings[key] = token
    model_specific = {**objects, **strings}
    names = dict.fromkeys([*SPECIAL_TOKEN_NAMES, *model_specific])
    return {
        name: model_specific[name] if name in model_specific else named[name]
        for name in names
        if name in model_specific or name in named
    }


def templates_from_config_value(name: str, value: Any) -> dict[str, str]:
    """`chat_template` as a string, or a list of `{name, template}` (named templates)."""
    if value is None:
        return {}
    if isinstance(value, str):
        return {"default": value}
    if isinstance(value, list):
        templates = {}
        for index, entry in enumerate(value):
            if not (
                isinstance(entry, Mapping)
                and isinstance(entry.get("name"), str)
                and isinstance(entry.get("template"), str)
            ):
                raise HFFileError(
                    name, f"chat_template[{index}] must be an object with 'name' and 'template'"
                )
            templates[entry["name"]] = entry["template"]
        return templates
    raise HFFileError(name, "chat_template must be a string or a list of {name, template}")


def _read_config(source: HFSource, text: str, max_depth: int) -> dict[str, str]:
    config = _load_json("tokenizer_config.json", text, max_depth)
    if not isinstance(config, dict):
        raise HFFileError("tokenizer_config.json", _NOT_AN_OBJECT)
    source.tokenizer_config = config
    source.special_tokens = special_tokens_from_config(config)
    for flag in ("add_bos_token", "add_eos_token"):
        if isinstance(config.get(flag), bool):
            setattr(source, flag, config[flag])
    return templates_from_config_value("tokenizer_config.json", config.get("chat_template"))


def _read_legacy_json(text: str, max_depth: int) -> str | None:
    """The template of a legacy `chat_template.json`, which only a processor reads."""
    data = _load_json("chat_template.json", text, max_depth)
    if not isinstance(data, dict) or "chat_template" not in data:
        raise HFFileError("chat_template.json", "must be an object with a 'chat_template' field")
    template = data["chat_template"]
    if template is not None and not isinstance(template, str):
        # A processor keeps a list as it is, and cannot render it.
        raise HFFileError("chat_template.json", "chat_template must be a string")
    return template


def _with_processor_template(
    templates: dict[str, str], legacy: str | None, files: Mapping[str, str]
) -> dict[str, str]:
    """The tokenizer's templates, and `chat_template.json`'s as `processor`.

    transformers' processor takes `chat_template.json` over every other template file,
    and refuses to load at all beside named template files (other `NAME.jinja`), while
    the tokenizer ignores `chat_template.json`; so there is no processor template then.
    """
    named_files = [
        path
        for path in files
        if path.endswith(".jinja") and PurePosixPath(path).name != "chat_template.jinja"
    ]
    if legacy is None or named_files:
        return templates
    if PROCESSOR_TEMPLATE in templates:
        raise HFFileError(
            "chat_template.json",
            f"its template is shown as {PROCESSOR_TEMPLATE!r}, a name the tokenizer's "
            "templates already use",
        )
    return {**templates, PROCESSOR_TEMPLATE: legacy}


def _jinja_templates(files: Mapping[str, str]) -> dict[str, str]:
    """`chat_template.jinja` is the default; any other `NAME.jinja` is the template NAME."""
    templates = {}
    for path, text in files.items():
        name = PurePosixPath(path).name
        if name == "chat_template.jinja":
            templates["default"] = text
        elif name.endswith(".jinja"):
            templates[name.removesuffix(".jinja")] = text
    return templates


def read_hf_files(files: Mapping[str, str], max_depth: int = DEFAULT_MAX_DEPTH) -> HFSource:
    """Read uploaded files (path -> text); raises `HFFileError` naming the bad file (one
    that nests deeper than `max_depth` among them)."""
    source = HFSource()
    by_name = {PurePosixPath(path).name: text for path, text in files.items()}
    unknown = [
        path
        for path in files
        if PurePosixPath(path).name not in KNOWN_JSON_FILES and not path.endswith(".jinja")
    ]
    if unknown:
        raise HFFileError(
            unknown[0],
            "not a file this reader knows: expected tokenizer_config.json, chat_template.jinja "
            "(or another .jinja), chat_template.json or tokenizer.json",
        )
    templates: dict[str, str] = {}
    if "tokenizer_config.json" in by_name:
        templates = _read_config(source, by_name["tokenizer_config.json"], max_depth)
    # The tokenizer's: template files replace the config's templates, all of them.
    templates = _jinja_templates(files) or templates
    if "chat_template.json" in by_name:
        legacy = _read_legacy_json(by_name["chat_template.json"], max_depth)
        templates = _with_processor_template(templates, legacy, files)
    source.templates = templates
    if "tokenizer.json" in by_name:
        # Parsed by the tokenizers library when the tokenizer is built, after the answer
        # (a file it cannot read fails the tokenizer, naming where: `check_json`); reading
        # all of it into Python here as well would cost ten times its size and double the
        # time.
        if not by_name["tokenizer.json"].lstrip().startswith("{"):
            raise HFFileError("tokenizer.json", _NOT_AN_OBJECT)
        source.tokenizer_json = by_name["tokenizer.json"]
    return source
