"""What the playground shows from a GGUF header: templates, special tokens, a little metadata."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from gguf.constants import Keys, LlamaFileType

from app.sources.gguf import GGUFHeader

_T = Keys.Tokenizer
#: Special-token names as transformers spells them, and the GGUF key holding each id.
SPECIAL_TOKEN_KEYS = {
    "bos_token": _T.BOS_ID,
    "eos_token": _T.EOS_ID,
    "eot_token": _T.EOT_ID,
    "eom_token": _T.EOM_ID,
    "unk_token": _T.UNK_ID,
    "sep_token": _T.SEP_ID,
    "pad_token": _T.PAD_ID,
    "mask_token": _T.MASK_ID,
}
#: Long free-text metadata (licences, descriptions) is cut to this many characters.
MAX_METADATA_CHARS = 2000
#: llama.cpp's gguf-split names shards "<name>-00001-of-00003.gguf".
_SPLIT_NAME = re.compile(r"-(\d{1,5})-of-(\d{1,5})\.gguf$", re.IGNORECASE)
_TEMPLATE_PREFIX = _T.CHAT_TEMPLATE + "."


@dataclass
class GGUFSource:
    """The parts of a GGUF header that a chat-template user cares about."""

    templates: dict[str, str]
    special_tokens: dict[str, str]
    add_bos_token: bool | None
    add_eos_token: bool | None
    tokenizer_model: str | None
    tokenizer_pre: str | None
    vocab_size: int
    metadata: dict[str, Any]
    split: dict[str, Any] | None


def _str(fields: dict[str, Any], key: str) -> str | None:
    value = fields.get(key)
    return value if isinstance(value, str) else None


def _bool(fields: dict[str, Any], key: str) -> bool | None:
    value = fields.get(key)
    return value if isinstance(value, bool) else None


def _templates(fields: dict[str, Any]) -> dict[str, str]:
    """The default template plus the named ones (tool_use, rag, ...)."""
    templates: dict[str, str] = {}
    if default := _str(fields, _T.CHAT_TEMPLATE):
        templates["default"] = default
    listed = fields.get(_T.CHAT_TEMPLATES)
    names = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    # Some converters write the named keys without the list, so take those too.
    names += [k[len(_TEMPLATE_PREFIX) :] for k in fields if k.startswith(_TEMPLATE_PREFIX)]
    for name in names:
        text = _str(fields, _T.CHAT_TEMPLATE_N.format(name=name))
        if text and name not in templates:
            templates[name] = text
    return templates


def _special_tokens(fields: dict[str, Any]) -> dict[str, str]:
    """Token ids from the header, turned into the token strings the template sees."""
    tokens = fields.get(_T.LIST)
    if not isinstance(tokens, list):
        return {}
    found: dict[str, str] = {}
    for name, key in SPECIAL_TOKEN_KEYS.items():
        token_id = fields.get(key)
        # A bool is an int too, but never meant as a token id.
        in_range = type(token_id) is int and 0 <= token_id < len(tokens)
        if in_range and isinstance(tokens[token_id], str):
            found[name] = tokens[token_id]
    return found


def quantization_name(file_type: int) -> str | None:
    """`general.file_type` as people say it: 15 -> "Q4_K_M", 0 -> "F32"."""
    try:
        name = LlamaFileType(file_type).name
    except ValueError:
        return None
    return name.removeprefix("MOSTLY_").removeprefix("ALL_")


def json_value(value: Any) -> Any:
    """A scalar GGUF value as JSON can carry it: NaN and ±infinity (legal in a GGUF float,
    not in JSON) become None, long text is cut to `MAX_METADATA_CHARS`."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str) and len(value) > MAX_METADATA_CHARS:
        return value[:MAX_METADATA_CHARS] + "…"
    return value


def _metadata(fields: dict[str, Any]) -> dict[str, Any]:
    """The scalar `general.*` keys, plus the quantization by name."""
    metadata: dict[str, Any] = {}
    for key, value in fields.items():
        if key.startswith("general.") and not isinstance(value, list):
            metadata[key.removeprefix("general.")] = json_value(value)
    file_type = fields.get(Keys.General.FILE_TYPE)
    if type(file_type) is int and (name := quantization_name(file_type)):
        metadata["quantization"] = name
    return metadata


def split_info(fields: dict[str, Any], file_name: str | None = None) -> dict[str, Any] | None:
    """Which shard of a split model this is (1-based), from the header or else the file name.

    Only the first shard carries the tokenizer and templates, hence `first`.
    """
    number = fields.get(Keys.Split.LLM_KV_SPLIT_NO)
    count = fields.get(Keys.Split.LLM_KV_SPLIT_COUNT)
    if type(number) is int and type(count) is int and 0 <= number < count:
        shard = number + 1  # split.no counts from 0, file names from 1
    elif file_name and (match := _SPLIT_NAME.search(file_name)):
        shard, count = int(match[1]), int(match[2])
        if not 1 <= shard <= count:
            return None
    else:
        return None
    return {"shard": shard, "count": count, "first": shard == 1}


def source_from_header(header: GGUFHeader, file_name: str | None = None) -> GGUFSource:
    """Pick out what the playground shows from a parsed header."""
    fields = header.fields
    tokens = fields.get(_T.LIST)
    return GGUFSource(
        templates=_templates(fields),
        special_tokens=_special_tokens(fields),
        add_bos_token=_bool(fields, _T.ADD_BOS),
        add_eos_token=_bool(fields, _T.ADD_EOS),
        tokenizer_model=_str(fields, _T.MODEL),
        tokenizer_pre=_str(fields, _T.PRE),
        vocab_size=len(tokens) if isinstance(tokens, list) else 0,
        metadata=_metadata(fields),
        split=split_info(fields, file_name),
    )
