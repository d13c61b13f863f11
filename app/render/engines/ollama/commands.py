"""Ollama's command lines: a Modelfile that pins the template Ollama takes, `ollama create`
with it, and the `OLLAMA_GO_TEMPLATE` setting that makes the choice explicit; and the
finding when Ollama would write a prompt without the tools a chat template supports.

Facts (ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7): `ollama create NAME -f
Modelfile` reads FROM, TEMPLATE and `PARAMETER stop` (`parser/parser.go`); a TEMPLATE given
replaces the one `template.Named` would adopt (`server/create.go`). For a GGUF whose
architecture gets a RENDERER from `ollama create` (`create.py`), the Modelfile pins that
RENDERER, its PARSER and stop strings instead. `OLLAMA_GO_TEMPLATE` is
read by the server (`envconfig`, `server/routes.go`): 1 renders a model's TEMPLATE
whatever its GGUF's chat template offers, 0 never renders a TEMPLATE. Since ollama#16031
(2026-05-29) a chat template with more capabilities wins by default; before it, and with
`OLLAMA_GO_TEMPLATE=1`, the TEMPLATE `ollama create` adopted is what renders.
"""

from __future__ import annotations

from typing import Any

from app.render.command_line import CommandContext, CommandLine, CommandWriter, Render, join
from app.render.engines.ollama import modelfile
from app.render.engines.ollama.capabilities import (
    TOOLS,
    chat_template_capabilities,
    go_template_capabilities,
)
from app.render.engines.ollama.choice import (
    GO_TEMPLATE,
    LLAMA_SERVER,
    RENDERER,
    adoption,
    decide,
)
from app.render.engines.ollama.engine_facts import model_of, renderer, renderer_reasons
from app.render.engines.ollama.hub.commands import hub_facts, hub_lines, hub_notes
from app.render.render_request import ModelFiles, RenderRequest

MODELFILE = "Modelfile"
#: The model name the lines create.
MODEL_NAME = "my-model"
#: The finding's id among the analysis's diagnostics.
DROPS_TOOLS = "ollama-template-drops-tools"
#: Where the Command view puts Ollama's lines (after llama.cpp, vLLM, transformers ...).
RANK = 60
_QUOTE, _TRIPLE = '"', '"""'


def facts(template: str, special_tokens: dict[str, str], render: Render) -> dict[str, Any]:
    """Which way Ollama takes for a model made from `template`, why, and the TEMPLATE and
    stop strings `ollama create` adopts for it (none when it adopts no entry)."""
    path = decide(template, "jinja")
    match, _ = adoption(template) if template else (None, "")
    entry = match.entry if match else None
    return {
        "ollama_path": path.path,
        "ollama_name": path.name,
        "ollama_distance": path.distance,
        "ollama_reasons": list(path.reasons),
        "ollama_template": entry.go_template if entry else None,
        "ollama_stop": list(entry.stop) if entry else [],
        "ollama_drops_tools": _drops_tools(template, path.path, entry),
        **hub_facts(template, special_tokens),
    }


def model_facts(template: str, facts_: dict[str, Any], model: ModelFiles) -> dict[str, Any]:
    """What a loaded GGUF changes: the RENDERER, PARSER and stop strings `ollama create`
    sets by its architecture, which then write the prompt (nothing for another model)."""
    request = RenderRequest(template, [], model=model)
    made = model_of(request)
    if model.architecture is None or made is None or made.renderer is None:
        return {}
    name = renderer(request)
    reasons = decide(template, "jinja", name, renderer_reasons=tuple(renderer_reasons(request)))
    return {
        "ollama_path": RENDERER,
        "ollama_name": name,
        "ollama_distance": None,
        "ollama_reasons": list(reasons.reasons),
        "ollama_template": None,
        "ollama_renderer": made.renderer,
        "ollama_parser": made.parser,
        "ollama_stop": list(made.stop),
        "ollama_drops_tools": None,
    }


def command_lines(context: CommandContext) -> list[CommandLine]:
    """The Modelfile with `ollama create`, the server setting that pins the choice, and
    the lines for the GGUF pulled from the Hugging Face Hub (`hub/commands.py`)."""
    facts_ = context.facts
    lines = [CommandLine("ollama", "modelfile", join(["ollama", "create", MODEL_NAME, "-f",
                                                     MODELFILE]),
                         {MODELFILE: _modelfile(context.gguf, facts_)})]  # fmt: skip
    setting = _go_template_setting(facts_)
    if setting is not None:
        lines.append(CommandLine("ollama", "env", f"OLLAMA_GO_TEMPLATE={setting} ollama serve"))
    return lines + hub_lines(facts_)


def _modelfile(gguf: str, facts_: dict[str, Any]) -> str:
    """FROM the GGUF, then the adopted TEMPLATE and its stop strings when Ollama renders
    it; a comment instead when the chat template wins or no TEMPLATE can be written."""
    source = gguf if "/" in gguf else f"./{gguf}"
    lines = ["FROM " + (modelfile.value(source, ("", _QUOTE)) or source)]
    if facts_.get("ollama_renderer"):
        return "\n".join([*lines, *_by_architecture(facts_)]) + "\n"
    template = facts_.get("ollama_template")
    if template is None:
        return "\n".join(lines) + "\n"
    if facts_.get("ollama_path") != GO_TEMPLATE:
        name = facts_.get("ollama_name")
        lines.append(f"# ollama create writes the TEMPLATE {name} here; OLLAMA_GO_TEMPLATE=0")
        lines.append("# keeps the GGUF's own chat template.")
        return "\n".join(lines) + "\n"
    written = modelfile.value(template, (_TRIPLE,))
    if written is None:
        lines.append("# This TEMPLATE cannot be written in a Modelfile: see the note.")
    else:
        lines.append(f"TEMPLATE {written}")
    return "\n".join([*lines, *_stop_lines(facts_)]) + "\n"


def _by_architecture(facts_: dict[str, Any]) -> list[str]:
    """The RENDERER, PARSER and stop lines that pin what `ollama create` sets by the
    GGUF's architecture (it would set them unasked; written, they stay)."""
    lines = [f"RENDERER {facts_['ollama_renderer']}"]
    lines += [f"PARSER {facts_['ollama_parser']}"] if facts_.get("ollama_parser") else []
    return lines + _stop_lines(facts_)


def _stop_lines(facts_: dict[str, Any]) -> list[str]:
    """A `PARAMETER stop` line for each stop string a Modelfile can hold."""
    return [f"PARAMETER stop {modelfile.value(stop)}" for stop in facts_.get("ollama_stop", [])
            if modelfile.value(stop) is not None]  # fmt: skip


def _go_template_setting(facts_: dict[str, Any]) -> str | None:
    """OLLAMA_GO_TEMPLATE's value that keeps what this page shows whatever the Ollama
    version decides: 1 when the adopted TEMPLATE renders, 0 when the chat template does
    although a TEMPLATE was adopted; None when there is no TEMPLATE to choose against."""
    if facts_.get("ollama_template") is None:
        return None
    return "1" if facts_.get("ollama_path") == GO_TEMPLATE else "0"


def command_notes(facts_: dict[str, Any]) -> dict[str, str]:
    """Why Ollama takes its way, and the finding when it would drop the tools."""
    notes = {}
    if facts_.get("ollama_reasons"):
        notes["ollama"] = " ".join(facts_["ollama_reasons"])
    template = facts_.get("ollama_template")
    written = modelfile.value(template, (_TRIPLE,)) if template else ""
    if written is None and facts_.get("ollama_path") == GO_TEMPLATE:
        notes["ollama_modelfile"] = (
            "Ollama's Modelfile reader cannot hold this TEMPLATE exactly (it has three double "
            "quotes in a row, or characters the reader drops): the Modelfile leaves it out."
        )
    if facts_.get("ollama_drops_tools"):
        notes["ollama_tools"] = facts_["ollama_drops_tools"]["message"]
    return notes | hub_notes(facts_)


def findings(template: str) -> list[dict[str, Any]]:
    """The analysis's diagnostics for `template`: Ollama dropping its tools, if it would."""
    path = decide(template, "jinja")
    match, _ = adoption(template) if template else (None, "")
    finding = _drops_tools(template, path.path, match.entry if match else None)
    return [finding] if finding else []


def _drops_tools(template: str, path: str, entry: Any) -> dict[str, Any] | None:
    """The finding when the TEMPLATE `ollama create` adopts has no tools and the chat
    template does: a warning when Ollama renders it, a note when the chat template wins
    here but an older Ollama, or OLLAMA_GO_TEMPLATE=1, would render it."""
    if entry is None or TOOLS not in chat_template_capabilities(template):
        return None
    if TOOLS in go_template_capabilities(entry.go_template):
        return None
    drop = (
        "the tools a request sends never reach the model, and Ollama says nothing: give "
        "the Modelfile a TEMPLATE that writes .Tools"
    )
    if path == GO_TEMPLATE:
        message = (
            f"Ollama renders {entry.name}, the TEMPLATE `ollama create` adopts for this chat "
            f"template, and it has no tools although the chat template has them: {drop}."
        )
        return {"id": DROPS_TOOLS, "severity": "warning", "message": message, "line": None}
    assert path == LLAMA_SERVER
    message = (
        f"`ollama create` writes {entry.name}, a TEMPLATE without tools, into a model made "
        "from this chat template, which has tools. This Ollama prefers the chat template; "
        "with OLLAMA_GO_TEMPLATE=1, or an Ollama from before 2026-05-29 (ollama#16031), "
        f"{entry.name} renders and {drop}."
    )
    return {"id": DROPS_TOOLS, "severity": "info", "message": message, "line": None}


WRITER = CommandWriter(rank=RANK, lines=command_lines, facts=facts, model_facts=model_facts,
                       notes=command_notes, findings=findings)  # fmt: skip
