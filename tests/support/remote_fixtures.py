"""Fixture repositories and GGUF files for the remote-source tests (Hub and URLs)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import tokenizers
import tokenizers.models
import tokenizers.pre_tokenizers
from gguf import GGUFWriter

#: The size of the sparse "model": only its header is data, the rest is a hole.
SPARSE_BYTES = 40 * 10**9
#: The template every fixture GGUF carries, naming the file it is in.
GGUF_TEMPLATE = "{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"


def tokenizer_json() -> str:
    """A small word-level `tokenizer.json` that transformers loads."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "hello": 3, "world": 4, "<tool>": 5}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    return tok.to_str()


def write_files(folder: Path, files: dict[str, str | bytes]) -> Path:
    """A repository folder holding `files` (path -> text or bytes)."""
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def transformers_repo(folder: Path) -> Path:
    """chat_template.jinja and a named template beside a config with its own template (the
    files win, as in transformers), extra named tokens, and files transformers never reads
    for a template (a root-level .jinja, weights, a README)."""
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "image_token": "<image>",
        "extra_special_tokens": {"tool_token": "<tool>"},
        "add_bos_token": True,
        "chat_template": "CONFIG {{ bos_token }}",
    }
    return write_files(
        folder,
        {
            "tokenizer_config.json": json.dumps(config),
            "tokenizer.json": tokenizer_json(),
            "chat_template.jinja": "JINJA {{ bos_token }}{% for m in messages %}{{ m.content }}"
            "{% endfor %}",
            "additional_chat_templates/tool_use.jinja": "TOOLS {{ tool_token }}",
            "stray.jinja": "never read",
            "model.safetensors": b"\0" * 4096,
            "README.md": "# a model",
        },
    )


def config_only_repo(folder: Path) -> Path:
    """Templates only in tokenizer_config.json, as a list of named templates (and the
    vocabulary transformers needs to load a tokenizer at all)."""
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "chat_template": [
            {"name": "default", "template": "DEFAULT {{ eos_token }}"},
            {"name": "rag", "template": "RAG {{ documents }}"},
        ],
    }
    files = {"tokenizer_config.json": json.dumps(config), "tokenizer.json": tokenizer_json()}
    return write_files(folder, files)


def gguf_file(path: Path, name: str, *, split: tuple[int, int] | None = None,
              tokens: int = 1000, size: int | None = None) -> Path:  # fmt: skip
    """A GGUF header with a SentencePiece vocabulary and `GGUF_TEMPLATE` (`split`: shard
    index from 0, and count), made `size` bytes long by a hole (a sparse file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = GGUFWriter(path, arch="llama")
    writer.add_name(name)
    writer.add_tokenizer_model("llama")
    pieces = ["<unk>", "<s>", "</s>", *(f"▁w{i}" for i in range(tokens - 3))]
    writer.add_token_list(pieces)
    writer.add_token_scores([float(-i) for i in range(len(pieces))])
    writer.add_token_types([2, 3, 3] + [1] * (len(pieces) - 3))
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_chat_template(GGUF_TEMPLATE)
    if split is not None:
        writer.add_uint16("split.no", split[0])
        writer.add_uint16("split.count", split[1])
        writer.add_int32("split.tensors.count", 0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    if size is not None:
        os.truncate(path, size)
    return path


def gguf_repo(folder: Path) -> Path:
    """Three quantisations: a small file, a split model in two shards, and a 40 GB sparse
    file (its header, then a hole), plus an image projector."""
    gguf_file(folder / "Model-Q2_K.gguf", "Model Q2_K")
    gguf_file(folder / "Model-Q4_K_M-00001-of-00002.gguf", "Model Q4_K_M", split=(0, 2))
    gguf_file(folder / "Model-Q4_K_M-00002-of-00002.gguf", "Model Q4_K_M", split=(1, 2), tokens=3)
    gguf_file(folder / "Model-Q8_0.gguf", "Model Q8_0", tokens=30_000, size=SPARSE_BYTES)
    gguf_file(folder / "mmproj-Model-F16.gguf", "projector", tokens=3)
    write_files(folder, {"README.md": "# GGUF files"})
    return folder
