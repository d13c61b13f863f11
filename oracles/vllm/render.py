"""Render requests with vLLM itself: run by `oracles.vllm.record` in vLLM's own environment.

This file imports only vLLM and what vLLM brings (not the playground): it reads a JSON
job on stdin, `{"pinned_now", "requests": [{"key", "template", "special_tokens", "body"}]}`,
and writes one JSON line per request: `{"key", "outcome": "ok", "prompt"}` or
`{"key", "outcome": "error", "type", "message", "cause"}`.

Each request takes vLLM's own chat path as `vllm serve` runs it for a Hugging Face
tokenizer: `ChatCompletionRequest.model_validate` of the body as a client sends it, the
chat parameters the server builds from it (`build_chat_params` with the server's default
template and content format `auto`, then the tools), and `HfRenderer.render_messages`,
which parses the messages, resolves the content format, and applies the template with
`tokenize=False`. The renderer gets the real `ModelConfig` of a tiny model folder made
here (a Llama config and a tokenizer with the request's special tokens); only the
`VllmConfig` around it, which insists on a device, is a stand-in holding the two
attributes the renderer reads. Transformers' `strftime_now` reads a clock pinned at
`pinned_now`, as the suite's reference renders do.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from datetime import datetime, tzinfo
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

#: A model config vLLM accepts without weights: only the renderer reads it.
MODEL_CONFIG = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_hidden_layers": 1,
    "num_key_value_heads": 4,
    "vocab_size": 8,
    "max_position_embeddings": 4096,
    "torch_dtype": "float32",
}


def model_folder(root: Path, special_tokens: dict[str, str]) -> Path:
    """A model folder whose tokenizer has exactly these special tokens."""
    import tokenizers
    import tokenizers.models

    name = json.dumps(sorted(special_tokens.items()))
    folder = root / hashlib.sha256(name.encode()).hexdigest()[:16]
    if folder.exists():
        return folder
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(MODEL_CONFIG))
    vocab = {"<unk>": 0, **{token: n + 1 for n, token in enumerate(special_tokens.values())}}
    model = tokenizers.models.WordLevel(vocab, unk_token="<unk>")
    (folder / "tokenizer.json").write_text(tokenizers.Tokenizer(model).to_str())
    config = {"tokenizer_class": "PreTrainedTokenizerFast", **special_tokens}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


class Renderers:
    """One vLLM renderer per set of special tokens, made on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[tuple, Any] = {}

    def get(self, special_tokens: dict[str, str]) -> Any:
        key = tuple(sorted(special_tokens.items()))
        if key not in self.made:
            from vllm.config import ModelConfig
            from vllm.renderers.hf import HfRenderer
            from vllm.tokenizers import get_tokenizer

            folder = str(model_folder(self.root, special_tokens))
            model_config = ModelConfig(model=folder, tokenizer=folder, dtype="float32")
            config = SimpleNamespace(
                model_config=model_config, parallel_config=SimpleNamespace(_api_process_rank=0)
            )
            tokenizer = get_tokenizer(folder)
            if tokenizer.special_tokens_map != special_tokens:
                raise AssertionError(f"tokenizer special tokens {tokenizer.special_tokens_map}")
            self.made[key] = HfRenderer(config, tokenizer)
        return self.made[key]


def render(renderer: Any, template: str, body: dict[str, Any]) -> str:
    """vLLM's prompt for one request body (raises what vLLM raises)."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.renderers.params import merge_kwargs

    request = ChatCompletionRequest.model_validate({"model": "model", **body})
    tools = None if request.tools is None else [tool.model_dump() for tool in request.tools]
    params = request.build_chat_params(template, "auto").with_defaults(
        merge_kwargs(None, {"tools": tools, "tokenize": False})
    )
    _, prompt = renderer.render_messages(request.messages, params)
    return prompt["prompt"]


def outcome(renderers: Renderers, item: dict[str, Any]) -> dict[str, Any]:
    try:
        prompt = render(renderers.get(item["special_tokens"]), item["template"], item["body"])
    except Exception as error:  # what vLLM answers with a 400
        cause = error.__cause__ or error.__context__
        return {
            "key": item["key"],
            "outcome": "error",
            "type": type(error).__name__,
            "message": str(error),
            "cause": type(cause).__name__ if cause is not None else None,
        }
    return {"key": item["key"], "outcome": "ok", "prompt": prompt}


def pinned_clock(now: datetime) -> Any:
    from transformers.utils import chat_template_utils

    class Pinned(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> datetime:  # type: ignore[override]
            return now if tz is None else now.replace(tzinfo=tz)

    return mock.patch.object(chat_template_utils, "datetime", Pinned)


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("vllm", "transformers", "jinja2", "pydantic")}


def main() -> None:
    job = json.load(sys.stdin)
    print(json.dumps({"versions": versions()}), flush=True)
    with (
        tempfile.TemporaryDirectory() as root,
        pinned_clock(datetime.fromisoformat(job["pinned_now"])),
    ):
        renderers = Renderers(Path(root))
        for item in job["requests"]:
            print(json.dumps(outcome(renderers, item), ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
