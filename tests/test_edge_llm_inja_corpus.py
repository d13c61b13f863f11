"""The Edge-LLM Inja interpreter against Edge-LLM's own renderer on the shared templates.

`oracles/edge_llm/recorded.json` (a recording of Edge-LLM's own code: docs/engines/
edge-llm.md) holds, per template,
Edge-LLM's load verdict and, per corpus conversation, the JSON context chatTemplate.cpp
handed to Inja with the prompt or the error that came back. Here the same template is
loaded with `inja.render.load` and rendered with that context: the verdict, the prompt
byte for byte, and the error text must agree.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from app.render.engines.edge_llm.inja.render import LoadError, RenderError, load, render
from app.render.limits import RenderLimits
from oracles.edge_llm import RECORDED, recorded
from tests.support.shared_data import HAVE_SHARED, template_files

pytestmark = pytest.mark.skipif(
    not (RECORDED.exists() and HAVE_SHARED), reason="no Edge-LLM recording or shared data"
)

LIMITS = RenderLimits()


def _templates() -> dict[str, str]:
    if not HAVE_SHARED:
        return {}
    return {path.stem: path.read_text(encoding="utf-8") for path in template_files()}


def _fixture() -> dict[str, Any]:
    return recorded() if RECORDED.exists() else {"templates": {}, "contexts": {}}


def _render_cases() -> list[tuple[str, str]]:
    cases = []
    for stem, entry in _fixture()["templates"].items():
        for name, record in entry.get("renders", {}).items():
            # The recorded context is that of Edge-LLM's first render, which gives the
            # prompt; a second render (the system prompt alone, for its cache) follows it.
            if "context" in record:
                cases.append((stem, name))
    return cases


def _now() -> float:
    pinned = datetime.fromisoformat(_fixture()["pinned_now"])
    if pinned.tzinfo is None:
        pinned = pinned.replace(tzinfo=UTC)
    return pinned.timestamp()


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    return _templates()


@pytest.mark.parametrize("stem", sorted(_fixture()["templates"]))
def test_load_verdict_matches_edge_llm(stem: str, sources: dict[str, str]) -> None:
    verdict = _fixture()["templates"][stem]["load"]
    try:
        load(sources[stem])
    except LoadError as error:
        assert not verdict["ok"], f"Edge-LLM loads {stem}, we refuse: {error}"
        assert str(error) == verdict["error"]
    else:
        assert verdict["ok"], f"Edge-LLM refuses {stem}: {verdict.get('error')}"


_LOADED: dict[str, Any] = {}


def _template(stem: str, sources: dict[str, str]) -> Any:
    if stem not in _LOADED:
        _LOADED[stem] = load(sources[stem])
    return _LOADED[stem]


@pytest.mark.parametrize(("stem", "case"), _render_cases())
def test_render_matches_edge_llm(stem: str, case: str, sources: dict[str, str]) -> None:
    fixture = _fixture()
    record = fixture["templates"][stem]["renders"][case]
    context = fixture["contexts"][record["context"]]
    try:
        prompt = render(_template(stem, sources), context, LIMITS, now=_now())
    except RenderError as error:
        assert record["outcome"] == "error", f"Edge-LLM renders, we fail: {error}"
        assert error.message == record["error"]
    else:
        assert record["outcome"] == "ok", f"Edge-LLM fails: {record.get('error')}"
        assert prompt == record["prompt"]
