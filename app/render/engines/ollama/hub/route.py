"""The way `ollama run hf.co/USER/REPO` renders a GGUF's chat template, and why.

A model pulled from the Hugging Face Hub is not made by `ollama create`: the Hub's
registry serves its TEMPLATE and params layers, made by `@huggingface/ollama-utils`
(`mapper.py`), and no `template.Named` runs. Ollama (read at
fb30760996871fa9460115c753afd2c60d4ab0f7, `server/images.go`, `server/routes.go`) then
weighs that TEMPLATE against the GGUF's chat template as for any model
(`capabilities.prefers_chat_template`): the chat template wins when it can do more, and
the conversation goes to llama-server; otherwise Ollama renders the TEMPLATE. Without a
TEMPLATE from the Hub, llama-server renders the GGUF's chat template (ollama#16031). A
gpt-oss GGUF whose Hub TEMPLATE has Harmony's tags uses Harmony (`family.py`): its
TEMPLATE renders whatever the chat template offers.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.render.engines.ollama.capabilities import (
    chat_template_capabilities,
    go_template_capabilities,
    listed,
    prefers_chat_template,
)
from app.render.engines.ollama.choice import GO_TEMPLATE, LLAMA_SERVER
from app.render.engines.ollama.family import harmony_reasons, uses_harmony
from app.render.engines.ollama.hub.mapper import CONVERTED, CUSTOM, PACKAGE, HubMapping

#: How the sentences name the route.
RUN = "`ollama run hf.co/USER/REPO`"
#: The package's version, as package.json pins it (tests check the two agree).
VERSION = "0.0.18"


@dataclass(frozen=True)
class HubRoute:
    """What the Hub serves for a chat template, and the way Ollama then takes."""

    mapping: HubMapping | None
    path: str  # "go-template" | "llama-server"
    reasons: tuple[str, ...]


def hub_route(jinja: str, mapping: HubMapping | None, family: str | None = None) -> HubRoute:
    """The way Ollama renders a model pulled from the Hub whose GGUF has `jinja`, given
    the Hub's `mapping` of it (None: the Hub serves no TEMPLATE) and the GGUF's
    architecture, its `family` (None: not known)."""
    if mapping is None:
        said = (
            f"{RUN}: the Hub ({PACKAGE} {VERSION}) maps this chat template to no Ollama "
            "template and serves no TEMPLATE, so Ollama sends the conversation to "
            "llama-server, which renders the GGUF's own chat template."
        )
        return HubRoute(None, LLAMA_SERVER, (said,))
    served = (
        f"{RUN}: the Hub ({PACKAGE} {VERSION}) serves {_what(mapping.model)} as the "
        f"TEMPLATE, {_stops(mapping.stop)}."
    )
    chat, go = chat_template_capabilities(jinja), go_template_capabilities(mapping.go_template)
    compared = (
        f"This chat template supports {listed(chat)}; the Hub's TEMPLATE supports {listed(go)}."
    )
    if uses_harmony(family, mapping.go_template):
        return HubRoute(
            mapping, GO_TEMPLATE, (served, compared, *harmony_reasons(family, mapping.go_template))
        )
    if prefers_chat_template(jinja, mapping.go_template):
        then = (
            f"{compared} The chat template can do more, so Ollama sends the conversation to "
            "llama-server with it (OLLAMA_GO_TEMPLATE=1 would force the Hub's TEMPLATE)."
        )
        return HubRoute(mapping, LLAMA_SERVER, (served, then))
    then = f"{compared} The chat template can do no more, so Ollama renders the Hub's TEMPLATE."
    return HubRoute(mapping, GO_TEMPLATE, (served, then))


def _what(model: str) -> str:
    """The Hub's TEMPLATE named by where it comes from."""
    if model == CUSTOM:
        return "a template from one of its own patterns"
    if model == CONVERTED:
        return "a template it converts from the Jinja (rendered with placeholder messages)"
    return f"the template of its table entry {model}"


def _stops(stop: tuple[str, ...]) -> str:
    """The params' stop strings in words."""
    if not stop:
        return "with no stop strings"
    return "with the stop strings " + ", ".join(f"`{text}`" for text in stop)
