"""What `ollama create` sets by the architecture of the GGUF a model is made from.

Facts read in ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7,
`server/create.go` (`createModel`): when the config lacks a RENDERER or a PARSER, the
GGUF's `general.architecture` fills in the one missing (a Modelfile's own RENDERER or
PARSER is kept):

- `gemma4`: RENDERER `gemma4` (resolved when the model runs, `renderer_resolution.py`),
  PARSER `gemma4`, and `PARAMETER stop "<turn|>"` unless the Modelfile sets a stop;
- `laguna`: RENDERER and PARSER `laguna`;
- `nemotron_h`, `nemotron_h_moe`, `nemotron_h_omni`: RENDERER and PARSER
  `nemotron-3-nano`.

Any other architecture gets nothing: the TEMPLATE `template.Named` adopts (or none)
decides, as for every model.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ByArchitecture:
    """The RENDERER, PARSER and stop strings `ollama create` gives one architecture."""

    renderer: str
    parser: str
    stop: tuple[str, ...] = ()


_NEMOTRON = ByArchitecture("nemotron-3-nano", "nemotron-3-nano")
#: `createModel`'s switch on the GGUF's architecture.
BY_ARCHITECTURE: dict[str, ByArchitecture] = {
    "gemma4": ByArchitecture("gemma4", "gemma4", ("<turn|>",)),
    "laguna": ByArchitecture("laguna", "laguna"),
    "nemotron_h": _NEMOTRON,
    "nemotron_h_moe": _NEMOTRON,
    "nemotron_h_omni": _NEMOTRON,
}


@dataclass(frozen=True)
class Created:
    """The model's RENDERER, PARSER and stop strings after `ollama create`, and the
    sentence saying what the architecture set (empty when it set nothing)."""

    renderer: str | None
    parser: str | None
    stop: tuple[str, ...]
    said: str = ""


def created(
    architecture: str | None,
    renderer: str | None = None,
    parser: str | None = None,
    stop: tuple[str, ...] = (),
) -> Created:
    """What a model made from a GGUF of `architecture`, with the Modelfile's `renderer`,
    `parser` and `stop` (None or empty: not given), ends up with."""
    chosen = Created(renderer, parser, stop)
    defaults = BY_ARCHITECTURE.get(architecture or "")
    if defaults is None or (renderer and parser):
        return chosen
    chosen = Created(
        renderer or defaults.renderer, parser or defaults.parser, stop or defaults.stop
    )
    set_ = [f"RENDERER {chosen.renderer}"] if not renderer else []
    set_ += [f"PARSER {chosen.parser}"] if not parser else []
    set_ += [f"PARAMETER stop {s!r}" for s in chosen.stop] if not stop else []
    said = (
        f"`ollama create` sets {', '.join(set_)} for a GGUF whose general.architecture is "
        f"{architecture} (server/create.go)."
    )
    return Created(chosen.renderer, chosen.parser, chosen.stop, said)
