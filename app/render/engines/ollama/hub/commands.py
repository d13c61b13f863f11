"""The Command view's lines for a GGUF pulled from the Hugging Face Hub: `ollama run
hf.co/USER/REPO`, and a Modelfile `FROM hf.co/USER/REPO` that pins the TEMPLATE and stop
strings that run takes (the Hub's, as `@huggingface/ollama-utils` makes them: `mapper.py`),
so that a later change of the Hub's mapping, or of Ollama's choice, does not change the
prompt; with `OLLAMA_GO_TEMPLATE` keeping the way shown.

Facts (ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7): `ollama run` pulls a
model named `hf.co/USER/REPO[:QUANT]` from the Hub's registry (`types/model/name.go`
takes any host), its TEMPLATE and params layers included; a Modelfile's `FROM` names a
model the same way, and its TEMPLATE and `PARAMETER stop` replace the pulled ones
(`server/create.go`).
"""

from __future__ import annotations

from typing import Any

from app.problems import TemplateProblem
from app.render.command_line import CommandLine, join
from app.render.engines.ollama import modelfile
from app.render.engines.ollama.choice import GO_TEMPLATE
from app.render.engines.ollama.hub.mapper import hub_mapping
from app.render.engines.ollama.hub.route import hub_route
from app.render.engines.transformersjs.node import NodeUnavailable
from app.render.limits import RenderLimits

#: The model the lines name: the Hub's GGUF repository (the page does not know it).
HUB_MODEL = "hf.co/USER/REPO"
#: The Modelfile the pinning line writes, and the model it creates.
HUB_MODELFILE, HUB_MODEL_NAME = "Modelfile.hf", "my-hf-model"


def hub_facts(template: str, special_tokens: dict[str, str]) -> dict[str, Any]:
    """What `ollama run hf.co/...` takes for this chat template: the Hub's TEMPLATE, stops
    and the way Ollama then renders (`ollama_hub`), or why it cannot be said
    (`ollama_hub_error`). Run in a sandbox worker, within the default render limits."""
    if not template:
        return {"ollama_hub": None}
    bos, eos = special_tokens.get("bos_token"), special_tokens.get("eos_token")
    try:
        mapping = hub_mapping(template, bos, eos, RenderLimits())
    except (NodeUnavailable, TemplateProblem) as error:
        message = error.message if isinstance(error, TemplateProblem) else str(error)
        return {"ollama_hub": None, "ollama_hub_error": message}
    route = hub_route(template, mapping)
    return {
        "ollama_hub": {
            "model": mapping.model if mapping else None,
            "template": mapping.go_template if mapping else None,
            "stop": list(mapping.stop) if mapping else [],
            "path": route.path,
        }
    }


def hub_lines(facts: dict[str, Any]) -> list[CommandLine]:
    """`ollama run hf.co/USER/REPO`, then the Modelfile that pins what it takes."""
    hub = facts.get("ollama_hub")
    if hub is None:
        return []
    lines = [CommandLine("ollama", "hub-run", join(["ollama", "run", HUB_MODEL]))]
    create = join(["ollama", "create", HUB_MODEL_NAME, "-f", HUB_MODELFILE])
    lines.append(CommandLine("ollama", "hub-modelfile", create, {HUB_MODELFILE: _pinned(hub)}))
    return lines


def _pinned(hub: dict[str, Any]) -> str:
    """FROM the Hub's model, with the Hub's TEMPLATE and stops when Ollama renders it; a
    comment when the GGUF's chat template renders instead (no TEMPLATE pins that)."""
    lines = [f"FROM {HUB_MODEL}"]
    if hub["path"] != GO_TEMPLATE:
        lines.append("# llama-server renders the GGUF's own chat template: run Ollama with")
        lines.append("# OLLAMA_GO_TEMPLATE=0 to keep it whatever TEMPLATE the Hub serves.")
        return "\n".join(lines) + "\n"
    written = modelfile.value(hub["template"], ('"""',))
    if written is None:
        lines.append("# The Hub's TEMPLATE cannot be written in a Modelfile: see the note.")
    else:
        lines.append(f"TEMPLATE {written}")
    stops = [modelfile.value(stop) for stop in hub["stop"]]
    lines += [f"PARAMETER stop {stop}" for stop in stops if stop is not None]
    lines.append("# Run Ollama with OLLAMA_GO_TEMPLATE=1 to render this TEMPLATE always.")
    return "\n".join(lines) + "\n"


def hub_notes(facts: dict[str, Any]) -> dict[str, str]:
    """What the Command view says of the hf.co lines."""
    hub = facts.get("ollama_hub")
    if hub is None:
        error = facts.get("ollama_hub_error")
        return {"ollama_hub": f"`ollama run hf.co/...` cannot be shown: {error}"} if error else {}
    served = f"the Hub's TEMPLATE ({hub['model']})" if hub["model"] else "no TEMPLATE"
    way = (
        "Ollama renders that TEMPLATE"
        if hub["path"] == GO_TEMPLATE
        else "llama-server renders the GGUF's chat template"
    )
    return {
        "ollama_hub": (
            f"`ollama run {HUB_MODEL}` (your GGUF repository on the Hugging Face Hub) gets "
            f"{served}, and {way}; `{HUB_MODELFILE}` pins it, whatever the Hub serves later."
        )
    }
