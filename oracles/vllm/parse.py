"""Read completions with vLLM's own parsers: run by `oracles.vllm.record_answers` in vLLM's
environment.

This file imports only vLLM and what vLLM brings (not the playground). It reads a JSON job
on stdin, `{"tokens": [...], "jobs": [{"parser", "cases": [...]}]}`, and writes one JSON
line with the versions, then one line per case: `{"parser", "name", "vllm": {...}}`.

`parser` is one of
- `tool:NAME`: the class `--tool-call-parser NAME` names, its non-streaming
  `extract_tool_calls(text, request)`; `{"tools_called", "tool_calls", "content"}`;
- `reasoning:NAME`: the class `--reasoning-parser NAME` names, `extract_reasoning(text,
  request)`; `{"reasoning", "content"}`;
- `serve:TOOL+REASONING` (either may be `none`): what `vllm serve --enable-auto-tool-choice`
  with those flags answers for a non-streaming chat request: the composed parser of
  `ParserManager.get_parser` (Harmony's when either flag is gpt-oss's), its `parse`, then
  `assemble_chat_message_fields`, as `OpenAIServingChat` does;
  `{"content", "reasoning", "tool_calls"}`.
A tool call is `[name, arguments, id]`, the id null where vLLM makes a random one. When the
parser raises, the answer is `{"exception": "Type: message"}` (the server answers an error).

Each case is `{"name", "text", "tools", "kwargs"}` and optionally `"tool_choice"`,
`"no_reasoning_parser": true` (a `tool:` parser runs without a reasoning parser in front,
which engine-based parsers are told), `"special_tokens"` (the tokenizer's special tokens),
`"prompt"` (the rendered prompt, whose ids the parser is told) and `"keep_ids": true` (a
tool parser's random ids kept, for a case that checks their shape). The tokenizer is a
real Hugging Face tokenizer (`vllm.tokenizers.get_tokenizer` on a folder made here) whose
vocabulary is `<unk>` and the job's marker tokens, each one token; its special tokens are
the case's, else none. Text between markers encodes as `<unk>`.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

#: The shapes of the random ids vLLM gives tool calls (`make_tool_call_id`, and the
#: 9-character ids of Mistral's `MistralToolCall.generate_random_id`).
RANDOM_ID = re.compile(r"(chatcmpl-tool-|call_)[0-9a-zA-Z]{16,}|[0-9a-zA-Z]{9}")


def tokenizer_folder(root: Path, tokens: list[str], special: list[str] | None = None) -> Path:
    """A model folder whose tokenizer has these marker tokens, each one token; `special`
    (when given) are its special tokens (`all_special_tokens`), else none."""
    import tokenizers
    import tokenizers.models

    model = tokenizers.Tokenizer(tokenizers.models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
    every = list(dict.fromkeys([*tokens, *(special or [])]))
    model.add_special_tokens([tokenizers.AddedToken(t, special=True) for t in every])
    (root / "tokenizer.json").write_text(model.to_str())
    config: dict[str, Any] = {"tokenizer_class": "PreTrainedTokenizerFast"}
    if special:
        config["extra_special_tokens"] = list(special)
    (root / "tokenizer_config.json").write_text(json.dumps(config))
    (root / "config.json").write_text(json.dumps({"model_type": "llama"}))
    return root


class Tokenizers:
    """One tokenizer per set of special tokens, made on first use."""

    def __init__(self, root: Path, tokens: list[str]) -> None:
        self.root, self.tokens, self.made = root, tokens, {}

    def get(self, special: list[str] | None) -> Any:
        from vllm.tokenizers import get_tokenizer

        key = tuple(special or ())
        if key not in self.made:
            folder = self.root / f"t{len(self.made)}"
            folder.mkdir()
            self.made[key] = get_tokenizer(str(tokenizer_folder(folder, self.tokens, special)))
        return self.made[key]


def with_prompt(parser: Any, tokenizer: Any, case: dict[str, Any]) -> Any:
    """The parser told the rendered prompt's ids (`set_prompt_token_ids`), as the server
    does, when the case gives a prompt."""
    if case.get("prompt") is not None and hasattr(parser, "set_prompt_token_ids"):
        parser.set_prompt_token_ids(tokenizer.encode(case["prompt"], add_special_tokens=False))
    return parser


def make_request(case: dict[str, Any]) -> Any:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    body: dict[str, Any] = {"model": "model", "messages": [{"role": "user", "content": "hi"}]}
    if case.get("tools"):
        body["tools"] = case["tools"]
    if case.get("kwargs"):
        body["chat_template_kwargs"] = case["kwargs"]
    if case.get("tool_choice") is not None:
        body["tool_choice"] = case["tool_choice"]
    return ChatCompletionRequest.model_validate(body)


def call_id(value: str | None) -> str | None:
    return None if value is None or RANDOM_ID.fullmatch(value) else value


def tool_answer(tokenizer: Any, name: str, case: dict[str, Any]) -> dict[str, Any]:
    from vllm.tool_parsers import ToolParserManager

    request = make_request(case)
    cls = ToolParserManager.get_tool_parser(name)
    kwargs = case.get("kwargs") or {}
    try:  # the engine-based adapters take the request's kwargs, as the server gives them
        parser = cls(tokenizer, request.tools, chat_template_kwargs=kwargs, model_config=None)
    except TypeError:
        parser = cls(tokenizer, request.tools)
    if case.get("no_reasoning_parser") and hasattr(parser, "skip_reasoning_parsing"):
        parser.skip_reasoning_parsing = True
    info = with_prompt(parser, tokenizer, case).extract_tool_calls(case["text"], request)
    # A case that checks the shape of the random ids keeps them (`keep_ids`).
    keep = case.get("keep_ids")
    calls = [
        [c.function.name, c.function.arguments, c.id if keep else call_id(c.id)]
        for c in info.tool_calls
    ]
    return {"tools_called": info.tools_called, "tool_calls": calls, "content": info.content}


def reasoning_answer(tokenizer: Any, name: str, case: dict[str, Any]) -> dict[str, Any]:
    from vllm.reasoning import ReasoningParserManager

    cls = ReasoningParserManager.get_reasoning_parser(name)
    parser = cls(tokenizer, chat_template_kwargs=case.get("kwargs") or {})
    parser = with_prompt(parser, tokenizer, case)
    reasoning, content = parser.extract_reasoning(case["text"], make_request(case))
    return {"reasoning": reasoning, "content": content}


def serve_answer(tokenizer: Any, pair: str, case: dict[str, Any]) -> dict[str, Any]:
    from vllm.entrypoints.openai.chat_completion.message_assembly import (
        assemble_chat_message_fields,
    )
    from vllm.parser.parser_manager import ParserManager

    tool, reasoning = (None if n == "none" else n for n in pair.split("+"))
    # gpt-oss models are served with the Harmony parser whatever the flags say.
    harmony = bool({tool, reasoning} & {"openai", "openai_gptoss"})
    parser_cls = ParserManager.get_parser(
        tool_parser_name=tool,
        reasoning_parser_name=reasoning,
        enable_auto_tools=True,
        is_harmony=harmony,
    )
    request = make_request(case)
    if parser_cls is None:
        fields = assemble_chat_message_fields(
            request, None, case["text"], [], enable_auto_tools=True, parser_cls=None
        )
    else:
        parser = parser_cls(tokenizer, request.tools, chat_template_kwargs=case.get("kwargs") or {})
        said, content, calls = with_prompt(parser, tokenizer, case).parse(
            case["text"], request, enable_auto_tools=True
        )
        fields = assemble_chat_message_fields(
            request, said, content, calls, enable_auto_tools=True, parser_cls=parser_cls
        )
    return {
        "content": fields.content,
        "reasoning": fields.reasoning,
        "tool_calls": [
            [c.function.name, c.function.arguments, call_id(c.id)] for c in fields.tool_calls
        ],
    }


READERS = {"tool": tool_answer, "reasoning": reasoning_answer, "serve": serve_answer}


def answer(tokenizers: Tokenizers, parser: str, case: dict[str, Any]) -> dict[str, Any]:
    kind, name = parser.split(":", 1)
    try:
        return READERS[kind](tokenizers.get(case.get("special_tokens")), name, case)
    except Exception as error:  # what the server answers with an error
        return {"exception": f"{type(error).__name__}: {error}"[:400]}


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("vllm", "transformers", "pydantic")}


def main() -> None:
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    job = json.load(sys.stdin)
    print(json.dumps({"versions": versions()}), flush=True)
    with tempfile.TemporaryDirectory() as root:
        tokenizers = Tokenizers(Path(root), job["tokens"])
        for item in job["jobs"]:
            for case in item["cases"]:
                out = answer(tokenizers, item["parser"], case)
                line = {"parser": item["parser"], "name": case["name"], "vllm": out}
                print(json.dumps(line, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
