"""A template that prints `bos_token` while the request has none: the prompt starts
without the model's BOS, and nothing else says so (it renders without an error).

Found by rendering, like the other probes: the request again with a marker string for
`bos_token`; if the marker reaches the prompt, the template prints it.
"""

from __future__ import annotations

from dataclasses import replace

from app.analysis.diagnostics import Diagnostic, Render, line_of
from app.problems import TemplateProblem
from app.render.core import RenderRequest

#: What `bos_token` is set to for the probe.
BOS_PROBE = "PROBE_BOS_5a1c"


def empty_bos(base: RenderRequest, render: Render) -> list[Diagnostic]:
    """A warning when the template prints `bos_token` and the request's is empty."""
    if base.special_tokens.get("bos_token"):
        return []
    probe = replace(base, special_tokens={**base.special_tokens, "bos_token": BOS_PROBE})
    try:
        printed = render(probe)
    except TemplateProblem:
        return []
    if BOS_PROBE not in printed:
        return []
    message = (
        "The template prints bos_token, which is empty here: the prompt starts without "
        "the model's BOS. Load the model's vocabulary (a GGUF or tokenizer.json), choose "
        "its library entry, or set bos_token under Special tokens."
    )
    return [Diagnostic("empty-bos", "warning", message, line_of(base.template, "bos_token"))]
