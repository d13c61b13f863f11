"""How to run TensorRT Edge-LLM with the playground's template: where it must sit.

Edge-LLM reads no template from a flag or a request. Read at commit 83f5f76 of the
public fork guswns531/TensorRT-Edge-LLM:

- `tensorrt-edgellm-export CHECKPOINT_DIR ONNX_DIR` (tensorrt_edgellm/chat_template.py,
  `write_chat_template`) copies the checkpoint's `chat_template.jinja` into
  `ONNX_DIR/llm/`; only a checkpoint without that file has its template taken from
  `chat_template.json`, `processor_config.json` or `tokenizer_config.json`, in that order.
- `llm_build --onnxDir ONNX_DIR/llm --engineDir ENGINE_DIR` (cpp/builder/llmBuilder.cpp,
  `copyTokenizerFiles`) copies `chat_template.jinja` beside the engine.
- The runtime (`RuntimeCoordinator::initializeChatTemplate`) loads
  `ENGINE_DIR/chat_template.jinja` with Inja when it starts, so an engine already built
  takes a new template by replacing that file, without a rebuild.
- `tensorrt-edgellm-serve CHECKPOINT_DIR` builds its engine from the checkpoint the same
  way and caches it under a key that hashes the checkpoint's `.json`, `.model` and weight
  files but not `chat_template.jinja` (experimental/server/runtime/engine_build.py), so a
  cached engine keeps the old template unless the cache is cleared; it refuses a request
  that offers tools with the default tool choice unless started with
  `--enable-auto-tool-choice` (experimental/server/api/serving_chat.py). Its line carries
  the answer parsers the Response view reads with (`--tool-call-parser`,
  `--reasoning-parser`: the ones chosen there, else `auto`, the server's default).

The placeholders are Edge-LLM's own names: its flags `--checkpointDir`, `--onnxDir` and
`--engineDir`.
"""

from __future__ import annotations

from typing import Any

from app.problems import TemplateProblem
from app.render.command_line import (
    HF_PLACEHOLDER,
    TEMPLATE_FILE,
    CommandContext,
    CommandLine,
    CommandWriter,
    Render,
    join,
)
from app.render.engines.edge_llm.answers.reasoning import REASONING_CHOICES, TOOL_CHOICES
from app.render.engines.edge_llm.loading import check_loads
from app.render.limits import RenderLimits

#: The engine's id: the key of its model refusal and parser choices in a context.
ENGINE_ID = "edge-llm"

#: The name Edge-LLM's export, builder and runtime read the template under.
MODEL_TEMPLATE = "chat_template.jinja"
CHECKPOINT_DIR, ONNX_DIR, ENGINE_DIR = "CHECKPOINT_DIR", "ONNX_DIR", "ENGINE_DIR"
#: The server's flags: take the new template, and serve requests that offer tools.
SERVE_FLAGS = ("--enable-auto-tool-choice", "--clear-engine-cache")
#: Where a source build of Edge-LLM puts its engine builder (its Quick Start's path).
LLM_BUILD = "./build/examples/llm/llm_build"

_EXPORT_NOTE = (
    "# tensorrt-edgellm-export copies the checkpoint's chat_template.jinja (it wins over a "
    "chat_template in tokenizer_config.json) to ONNX_DIR/llm, llm_build copies it beside "
    "the engine, and the runtime loads it from ENGINE_DIR"
)
_ENGINE_NOTE = (
    "# An engine already built: the runtime loads ENGINE_DIR/chat_template.jinja when it "
    "starts, so replacing it needs no rebuild"
)
_SERVE_NOTE = (
    "# The server builds its engine from the checkpoint; its cache key leaves "
    "chat_template.jinja out, so --clear-engine-cache makes it take the new template; "
    "without --enable-auto-tool-choice it refuses requests that offer tools"
)


def parser_flags(chosen: dict[str, str]) -> list[str]:
    """`--tool-call-parser` and `--reasoning-parser` as chosen (a value the server does
    not know stays out: `auto`, its default, takes its place)."""
    flags = []
    for name, choices in (
        ("tool_call_parser", TOOL_CHOICES),
        ("reasoning_parser", REASONING_CHOICES),
    ):
        value = chosen.get(name)
        flags += ["--" + name.replace("_", "-"), value if value in choices else "auto"]
    return flags


def lines_for(
    context: CommandContext, refusal: str | None, parsers: dict[str, str] | None = None
) -> list[CommandLine]:
    """Export, engine-folder and server forms; each starts with a warning comment when
    Edge-LLM would not load the model (`refusal`, its reason); the server's carries the
    answer parsers chosen (`parsers`, by option name)."""
    files = {TEMPLATE_FILE: context.template}
    into_checkpoint = join(["cp", TEMPLATE_FILE, f"{CHECKPOINT_DIR}/{MODEL_TEMPLATE}"])
    download = []
    if context.hf_id != HF_PLACEHOLDER:
        download = [join(["hf", "download", context.hf_id, "--local-dir", CHECKPOINT_DIR])]
    export = [
        _EXPORT_NOTE,
        *download,
        into_checkpoint,
        join(["tensorrt-edgellm-export", CHECKPOINT_DIR, ONNX_DIR]),
        join([LLM_BUILD, "--onnxDir", f"{ONNX_DIR}/llm", "--engineDir", ENGINE_DIR]),
    ]
    engine = [_ENGINE_NOTE, join(["cp", TEMPLATE_FILE, f"{ENGINE_DIR}/{MODEL_TEMPLATE}"])]
    serve = [
        _SERVE_NOTE,
        *download,
        into_checkpoint,
        join(
            ["tensorrt-edgellm-serve", CHECKPOINT_DIR, *SERVE_FLAGS, *parser_flags(parsers or {})]
        ),
    ]
    warning = [f"# Warning: {' '.join(refusal.split())[:500]}"] if refusal else []
    return [
        CommandLine("edge-llm", form, "\n".join([*warning, *lines]), files)
        for form, lines in (("export", export), ("engine folder", engine), ("serve", serve))
    ]


def facts(template: str, special_tokens: dict[str, str], render: Render) -> dict[str, Any]:
    """Whether Edge-LLM loads the template, and why not."""
    try:
        check_loads(template, RenderLimits())
    except TemplateProblem as problem:
        return {"edge_llm_load_error": {"message": problem.message, "line": problem.line}}
    return {"edge_llm_load_error": None}


def command_lines(context: CommandContext) -> list[CommandLine]:
    """How to export, or serve, a model with the template (`lines_for`), with a warning
    first when Edge-LLM would not load it: the model's refusal comes first, as in
    Edge-LLM's loader, which looks for named templates before it parses."""
    refused = context.facts.get("edge_llm_load_error") or {}
    refusal = context.facts.get("model_refusals", {}).get(ENGINE_ID) or refused.get("message")
    return lines_for(context, refusal, context.parsers.get(ENGINE_ID, {}))


WRITER = CommandWriter(rank=30, lines=command_lines, facts=facts)
