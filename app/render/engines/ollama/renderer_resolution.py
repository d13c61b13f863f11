"""Which Gemma 4 renderer a model whose RENDERER is `gemma4` gets when it runs.

Facts read in ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7,
`server/renderer_resolution.go` (`resolveRendererName`): the RENDERER `gemma4` (the one
`ollama create` writes for a gemma4 GGUF) is resolved each time the model runs. The
model's short name, then its full name, decides first: one holding "e2b" or "e4b" gets
`gemma4-small`, one holding "12b", "26b" or "31b" `gemma4-large` (case aside). Else the
config's model type (the GGUF's `general.parameter_count` as `format.HumanNumber`
writes it: "25.2B") decides: 12 billion parameters or more is `gemma4-large`. Else
`gemma4-small`. Every other RENDERER is taken as it is.
"""

from __future__ import annotations

LEGACY, SMALL, LARGE = "gemma4", "gemma4-small", "gemma4-large"
#: Parameters from which the model type picks the large renderer.
LARGE_FROM = 12_000_000_000
_BY_NAME = ((SMALL, ("e2b", "e4b")), (LARGE, ("12b", "26b", "31b")))
_UNITS = {"B": 1_000_000_000, "M": 1_000_000, "K": 1_000}


def resolve(renderer: str | None, names: tuple[str, ...] = (), model_type: str = "") -> str | None:
    """The renderer a model with RENDERER `renderer`, named `names` (short name first)
    and of `model_type`, runs with."""
    if renderer != LEGACY:
        return renderer
    for name in names:
        if (by_name := _by_name(name)) is not None:
            return by_name
    count = parse_human_number(model_type)
    if count is not None:
        return LARGE if count >= LARGE_FROM else SMALL
    return SMALL


def _by_name(name: str) -> str | None:
    """The renderer the name says, if it says one."""
    lower = name.lower()
    return next((chosen for chosen, marks in _BY_NAME if any(m in lower for m in marks)), None)


def human_number(count: int) -> str:
    """`format.HumanNumber`: 25200000000 as "25.2B", 12000000000 as "12B"."""
    for unit, size, decimals in (("B", 10**9, 1), ("M", 10**6, 2)):
        if count >= size:
            number = count / size
            return (
                f"{number:.0f}{unit}" if number == int(number) else f"{number:.{decimals}f}{unit}"
            )
    return f"{count / 1000:.0f}K" if count >= 1000 else str(count)


def parse_human_number(text: str) -> int | None:
    """`parseHumanParameterCount`: "25.2B" as 25200000000; None for text it cannot read."""
    if not text or text[-1].upper() not in _UNITS:
        return None
    try:
        value = float(text[:-1])
    except ValueError:
        return None
    return int(value * _UNITS[text[-1].upper()])


def resolved_said(chosen: str | None, names: tuple[str, ...], model_type: str) -> str:
    """The sentence on how RENDERER gemma4 resolved to `chosen`."""
    named = next((name for name in names if _by_name(name) is not None), None)
    if named is not None:
        by = f"the model's name {named} says"
    elif parse_human_number(model_type) is not None:
        size = "12B or more" if chosen == LARGE else "under 12B"
        by = f"the model type `ollama create` writes is {model_type} ({size})"
    else:
        by = "neither the model's name nor its type says its size"
    return (
        f"Ollama resolves RENDERER gemma4 when the model runs: {chosen}, as {by}. A model "
        "name holding e2b or e4b picks gemma4-small, one holding 12b, 26b or 31b "
        "gemma4-large (server/renderer_resolution.go)."
    )
