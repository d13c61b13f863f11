"""The autoparser's analyses of a template, each run once per process and template.

The reasoning part of the analysis (`analyzer.analyze_reasoning`) is what both sides of
the engine read: the render for thinking's default and the prefill's tags, the answer
parser as the start of the whole analysis. It is computed once here, so the two cannot
disagree on whether a template thinks.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from app.render.engines.llamacpp.apply.types import ChatTemplate
from app.render.engines.llamacpp.autoparser.analysis import NONE, Analysis
from app.render.engines.llamacpp.autoparser.analyzer import analyze, analyze_reasoning
from app.render.engines.llamacpp.autoparser.workarounds import reasoning_workarounds
from app.render.engines.llamacpp.families import family_of
from app.render.environment import template_hash

#: Analyses by kind and template, newest last; a few templates serve one page's requests.
_CACHE: dict[tuple[str, str], Analysis] = {}
_CACHED = 64


def _cached(kind: str, template: ChatTemplate, compute: Callable[[], Analysis]) -> Analysis:
    """`compute()` for this template, kept for the next request (the probes render about
    twenty times)."""
    key = (kind, template_hash("\0".join((template.source, template.bos, template.eos))))
    if key not in _CACHE:
        if len(_CACHE) >= _CACHED:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = compute()
    return _CACHE[key]


def _raw_reasoning(template: ChatTemplate) -> Analysis:
    """analyze_reasoning's own finding, before the workarounds."""
    return _cached("reasoning", template, lambda: analyze_reasoning(template))


def reasoning_for(template: ChatTemplate) -> Analysis:
    """The reasoning mode and tags the autoparser ends with (its workarounds applied)."""

    def corrected() -> Analysis:
        analysis = copy.deepcopy(_raw_reasoning(template))
        reasoning_workarounds(template.source, analysis)
        return analysis

    return _cached("reasoning+workarounds", template, corrected)


def analysis_for(template: ChatTemplate) -> Analysis:
    """The autoparser's whole analysis of `template`, built on the shared reasoning part."""
    return _cached("whole", template, lambda: analyze(template, _raw_reasoning(template)))


def supports_thinking(template: ChatTemplate) -> bool:
    """common_chat_templates_support_enable_thinking: llama-server's default for
    enable_thinking (a handler's own answer, or reasoning the autoparser found)."""
    family = family_of(template.source)
    if family is not None:
        return family.hooks(template.source).thinking
    return reasoning_for(template).reasoning_mode != NONE
