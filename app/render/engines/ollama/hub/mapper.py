"""The Hub's mapping of a GGUF's Jinja chat template to an Ollama Go template, by the real
package, in a sandboxed Node child.

For `ollama run hf.co/USER/REPO` the Hugging Face Hub serves Ollama a TEMPLATE and params
of its own making: `convertGGUFTemplateToOllama` of the npm package
`@huggingface/ollama-utils` (pinned in package-lock.json), which looks the chat template
up in its table of Ollama library models (by its first 128 characters, then by its set of
special tokens), then tries its own patterns, then converts the Jinja by rendering it
with placeholder messages. `mapper.cjs` runs that function as it is, in the Node child
the transformers.js engine renders with (`NodeRenderer`: the same time, memory and output
limits), so what is shown is the package's own answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.problems import TemplateProblem
from app.render.engines.transformersjs.node import NodeRenderer
from app.render.limits import RenderLimits

#: The package, as package.json pins it.
PACKAGE = "@huggingface/ollama-utils"
#: What the package calls a mapping that is not an entry of its table.
CUSTOM, CONVERTED = "custom-matching", "auto-conversion"


@dataclass(frozen=True)
class HubMapping:
    """What the Hub serves for a GGUF's chat template: the table entry it matched (an
    Ollama library model such as "library/llama3.1:8b"), or `CUSTOM` (one of its
    patterns) or `CONVERTED` (made from the Jinja); the Go TEMPLATE and the params."""

    model: str
    go_template: str
    stop: tuple[str, ...]
    #: The params besides `stop` (none in 0.0.18's table, but the format allows them).
    params: tuple[tuple[str, str], ...]


class HubMapper(NodeRenderer):
    """One Node child running `mapper.cjs`, under `limits`."""

    SCRIPT = Path(__file__).with_name("mapper.cjs")
    PACKAGES = f"{PACKAGE} (with @huggingface/jinja)"

    def map(self, chat_template: str, bos: str | None, eos: str | None) -> HubMapping | None:
        """The package's answer for a GGUF with this chat template and BOS/EOS tokens."""
        request = {
            "chat_template": chat_template,
            "bos_token": bos,
            "eos_token": eos,
            "max_chars": self.limits.output_chars,
        }
        # ASCII JSON: text that is not valid Unicode (a lone surrogate) crosses as an escape.
        answer = self._exchange(json.dumps(request).encode("ascii") + b"\n")
        if "error" in answer:
            error = answer["error"]
            raise TemplateProblem(error["type"], error["message"], None, error.get("limit"))
        return _mapping(answer["mapped"])


def _mapping(mapped: dict[str, Any] | None) -> HubMapping | None:
    """The package's entry as a `HubMapping` (None: it maps the template to nothing)."""
    if mapped is None:
        return None
    params = dict(mapped["params"])
    stop = params.pop("stop", None) or []
    others = tuple((key, json.dumps(value)) for key, value in sorted(params.items()))
    return HubMapping(mapped["model"], mapped["template"], tuple(stop), others)


@lru_cache(maxsize=16)
def hub_mapping(
    chat_template: str, bos: str | None, eos: str | None, limits: RenderLimits
) -> HubMapping | None:
    """What the Hub serves Ollama for a GGUF with this chat template (None: no TEMPLATE);
    kept for the templates a page asks about again. Raises `TemplateProblem` (a limit, or
    the package refusing the template) and `NodeUnavailable`."""
    return HubMapper.of(limits).map(chat_template, bos, eos)
