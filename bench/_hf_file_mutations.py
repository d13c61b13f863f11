"""Mutations of whole files: JSON-level damage, odd config values, odd multipart uploads.

Two kinds of operator: `DocOp(rng, case)` changes the parsed files before they are
written (a wrong type anywhere, a key twice, deep nesting, odd config fields), `PartOp`
changes the written parts (truncation, invalid UTF-8, file names, the envelope). Each
returns a short name of what it did.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from bench._hf_case import CONFIG, TOKENIZER, Case, Part, get, pick, pick_node, put
from bench._hf_seeds import config_seeds

DocOp = Callable[[random.Random, Case], str]
PartOp = Callable[[random.Random, Case, list[Part]], str]

#: Values of the wrong type for any place of a JSON file.
ODD_VALUES: list[Any] = [
    0, -1, 1.5, 2**64, -(2**63) - 1, 1e308, "", "x", "<s>", [], {}, None, True, False, [[]],
    {"a": 1}, [1, "a", None], float("nan"), float("inf"), float("-inf"), {"content": 7},
]  # fmt: skip


def _json_file(rng: random.Random, case: Case) -> str | None:
    """A JSON file of the case, `tokenizer.json` most often."""
    names = [name for name in case.docs if not name.endswith(".jinja")]
    if not names:
        return None
    return TOKENIZER if TOKENIZER in names and rng.random() < 0.6 else rng.choice(names)


def _replace_node(rng: random.Random, case: Case, value: Any) -> bool:
    """Put `value` in place of a node of one of the case's JSON files (False: it has none)."""
    name = _json_file(rng, case)
    if name is None:
        return False
    path = pick_node(case.docs[name], rng)
    case.docs[name] = put(case.docs[name], path, value)
    return True


def wrong_type(rng: random.Random, case: Case) -> str:
    replaced = _replace_node(rng, case, pick(rng, ODD_VALUES))
    return "wrong-type" if replaced else "wrong-type-none"


def deep(rng: random.Random, case: Case) -> str:
    """A value nested past every parser's limit (64 here, 128 for serde_json)."""
    depth = rng.choice([65, 127, 129, 1000, 100_000, 1_000_000])
    opening, closing = ("[", "]") if rng.random() < 0.5 else ('{"a":', "}")
    text = opening * depth + ("1" if closing == "}" else "") + closing * depth
    return f"deep-{depth}" if _replace_node(rng, case, case.fragment(text)) else "deep-none"


def huge_number(rng: random.Random, case: Case) -> str:
    """A number JSON allows and parsers choke on: long, out of range, or a bare word."""
    number = rng.choice(
        ["1" + "0" * rng.choice([20, 400, 4301, 100_000]), "1e400", "-1e400", "1e-400", "-0",
         "NaN", "Infinity", "-Infinity", "0.1e99999", "18446744073709551616"]
    )  # fmt: skip
    return "number" if _replace_node(rng, case, case.fragment(number)) else "number-none"


def duplicate_key(rng: random.Random, case: Case) -> str:
    """An object with one of its keys twice, the second with another value."""
    name = _json_file(rng, case)
    if name is None:
        return "duplicate-none"
    doc = case.docs[name]
    objects = [p for p in (pick_node(doc, rng) for _ in range(20)) if isinstance(get(doc, p), dict)]
    objects = [p for p in objects if get(doc, p)] or ([()] if isinstance(doc, dict) and doc else [])
    if not objects:
        return "duplicate-none"
    path = rng.choice(objects)
    node = get(doc, path)
    key = rng.choice(list(node))
    again = rng.choice([rng.choice(ODD_VALUES), node[key], rng.choice(list(node.values()))])
    items = [*node.items(), (key, again)]
    rng.shuffle(items)
    text = "{" + ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in items) + "}"
    case.docs[name] = put(doc, path, case.fragment(text))
    return "duplicate-key"


# --------------------------------------------------------------------------- parts


def _pick_part(rng: random.Random, parts: list[Part]) -> Part | None:
    json_parts = [p for p in parts if p.name and p.name.endswith(".json")]
    return rng.choice(json_parts or parts) if parts else None


def truncate(rng: random.Random, case: Case, parts: list[Part]) -> str:
    part = _pick_part(rng, parts)
    if part is None:
        return "truncate-none"
    where = rng.random()
    if where < 0.2:
        cut = 0
    elif where < 0.5:
        cut = max(0, len(part.data) - rng.randint(1, 64))
    else:
        cut = rng.randrange(len(part.data) + 1)
    part.data = part.data[:cut] + (b" \n\t" if rng.random() < 0.1 else b"")
    return "truncate"


#: Bytes that are not UTF-8: a stray byte, an overlong NUL, a surrogate, past U+10FFFF,
#: a sequence cut short.
INVALID_UTF8 = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x96", b"\x80"]


def invalid_utf8(rng: random.Random, case: Case, parts: list[Part]) -> str:
    part = _pick_part(rng, parts)
    if part is None:
        return "utf8-none"
    at = rng.randrange(len(part.data) + 1)
    part.data = part.data[:at] + rng.choice(INVALID_UTF8) + part.data[at:]
    return "invalid-utf8"


def framing(rng: random.Random, case: Case, parts: list[Part]) -> str:
    """A byte-order mark, trailing garbage, a comment, or two documents in one file."""
    part = _pick_part(rng, parts)
    if part is None:
        return "framing-none"
    before, after = rng.choice(
        [(b"\xef\xbb\xbf", b""), (b"", b"}"), (b"", b","), (b"// c\n", b""), (b"", b"{}"),
         (b"  \n", b"\n\n"), (b"", b"\x00"), (b"[", b"]")]
    )  # fmt: skip
    part.data = before + part.data + after
    return "framing"


# --------------------------------------------------------------------------- uploads

#: File names the reader does not know, or knows in odd spellings and places.
ODD_NAMES = [
    "vocab.txt", "tokenizer.model", "special_tokens_map.json", "", "x/tokenizer.json",
    "../tokenizer_config.json", "C:\\tokenizer.json", "tokenizer.json.jinja", ".jinja",
    "чат.jinja", "a" * 5000 + ".jinja", "tokenizer.JSON", " tokenizer.json", "tokenizer.json ",
    "additional_chat_templates/tool_use.jinja", "%2e%2e/tokenizer.json", "tokenizer%00.json",
    "a\x00b.jinja", "\udcff.jinja", "chat\udced\udca0\udc80.jinja",  # bytes: not UTF-8
]  # fmt: skip


def rename(rng: random.Random, case: Case, parts: list[Part]) -> str:
    if not parts:
        return "rename-none"
    rng.choice(parts).name = rng.choice(ODD_NAMES)
    return "rename"


def duplicate_part(rng: random.Random, case: Case, parts: list[Part]) -> str:
    """A file twice, in the same form field or another (two files of one name are 400)."""
    if not parts:
        return "duplicate-part-none"
    part = rng.choice(parts)
    field = part.field if rng.random() < 0.5 else f"again{len(parts)}"
    other = rng.choice(parts).data if rng.random() < 0.5 else b"{}"
    parts.insert(rng.randrange(len(parts) + 1), Part(field, part.name, other))
    return "duplicate-part"


def no_files(rng: random.Random, case: Case, parts: list[Part]) -> str:
    """No file at all: none sent, or each sent as a plain form field."""
    if rng.random() < 0.5:
        parts.clear()
        return "no-parts"
    for part in parts:
        part.name = None
    return "form-fields"


def many_parts(rng: random.Random, case: Case, parts: list[Part]) -> str:
    count = rng.choice([100, 1000, 5000])
    parts += [Part(f"many{i}", f"m{i}.jinja", b"{{ x }}") for i in range(count)]
    return f"parts-{count}"


def envelope(rng: random.Random, case: Case, parts: list[Part]) -> str:
    """The multipart body itself cut short."""
    case.cut_body = rng.random()
    return "envelope-cut"


UPLOAD_MUTATIONS: list[PartOp] = [rename, rename, duplicate_part, no_files, many_parts, envelope]


# --------------------------------------------------------------------------- config

#: What the reader takes from `tokenizer_config.json`.
CONFIG_FIELDS = [
    "chat_template", "bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
    "cls_token", "mask_token", "add_bos_token", "add_eos_token", "added_tokens_decoder",
]  # fmt: skip
TEMPLATE_SHAPES: list[Any] = [
    7, 1.5, True, None, {}, {"name": "default", "template": "x"}, [], [1], ["x"],
    [{"name": 1, "template": "x"}], [{"name": "a"}], [{"template": "x"}],
    [{"name": "a", "template": None}], [[{"name": "a", "template": "x"}]],
    [{"name": "a", "template": "x"}, {"name": "a", "template": "y"}],
    [{"name": "", "template": ""}], [{"name": "../../etc/passwd", "template": "{{"}],
    "{% for %}", "{{ " * 10_000, "x" * 300_000,
]  # fmt: skip
TOKEN_SHAPES: list[Any] = [
    ["<s>"], 1, {}, {"__type": "AddedToken"}, {"content": 5}, {"content": {"content": "<s>"}},
    {"content": None}, "", "x" * 100_000, True, {"content": "<s>", "special": "yes"},
]  # fmt: skip
FLAG_SHAPES: list[Any] = ["true", "false", 1, 0, None, [], {}, "", 2**64]


def _config(rng: random.Random, case: Case) -> dict[str, Any]:
    if not isinstance(case.docs.get(CONFIG), dict):
        case.docs[CONFIG] = rng.choice(list(config_seeds().values()))
    return case.docs[CONFIG]


def config_field(rng: random.Random, case: Case) -> str:
    """One or more fields the reader uses, given values of other types and shapes."""
    config = _config(rng, case)
    for name in rng.sample(CONFIG_FIELDS, rng.choice([1, 1, 2, 4])):
        if name == "chat_template":
            shapes = TEMPLATE_SHAPES
        elif name.startswith("add_"):
            shapes = FLAG_SHAPES
        else:
            shapes = TOKEN_SHAPES if rng.random() < 0.7 else ODD_VALUES
        config[name] = pick(rng, shapes)
        if rng.random() < 0.1 and not name.startswith("add_"):
            # A lone surrogate, escaped as JSON allows and no UTF-8 can carry.
            config[name] = case.fragment(rng.choice(['"\\ud800{{ x }}"', '{"content": "\\udfff"}']))
    return "config-field"


def many_templates(rng: random.Random, case: Case) -> str:
    """Very many named templates, in the config or as `.jinja` files."""
    count = rng.choice([100, 2000, 20_000])
    if rng.random() < 0.5:
        _config(rng, case)["chat_template"] = [
            {"name": f"t{i}", "template": f"{{{{ {i} }}}}"} for i in range(count)
        ]
        return f"templates-{count}"
    for index in range(min(count, 300)):
        case.docs[f"t{index}.jinja"] = "{{ messages }}" * rng.choice([1, 100])
    return "jinja-files"


def config_root(rng: random.Random, case: Case) -> str:
    """A config or `chat_template.json` that is not an object, or lacks its field."""
    name = rng.choice([CONFIG, "chat_template.json"])
    case.docs[name] = rng.choice([[], "x", 1, None, [{"chat_template": "x"}], {"chat": "x"},
                                  {"chat_template": pick(rng, TEMPLATE_SHAPES)}])  # fmt: skip
    return f"root-{name}"


def huge_config(rng: random.Random, case: Case) -> str:
    """A config that holds megabytes: in a special token, in templates just under the
    template cap, or in entries the reader passes over."""
    config = _config(rng, case)
    size = rng.choice([1, 8, 40]) << 20
    where = rng.randrange(3)
    if where == 0:
        config[rng.choice(CONFIG_FIELDS[1:8])] = f"<{rng.getrandbits(32):x}>" + "x" * size
    elif where == 1:
        template = "{{ messages }}" + "x" * (250_000 - 14)
        config["chat_template"] = [
            {"name": f"t{i}", "template": template} for i in range(size // 250_000)
        ]
    else:
        config["added_tokens_decoder"] = {
            str(i): {"content": f"<extra_{i}>", "special": True} for i in range(size // 40)
        }
    return f"huge-config-{where}-{size >> 20}MB"


CONFIG_MUTATIONS: list[DocOp] = [config_field, config_field, config_field, many_templates,
                                 config_root, huge_config]  # fmt: skip
