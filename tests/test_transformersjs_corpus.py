"""The transformers.js engine against @huggingface/jinja called directly under Node.

Every real template × every corpus conversation, plus cases on what transformers.js
leaves to the caller: the engine's prompt (or error type and message) must equal what the
library gives when called as transformers.js's apply_chat_template calls it. The
reference runs in one Node process (`oracles/transformersjs`), the engine in this one.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from app.problems import TemplateProblem
from app.render.core import render_with
from app.render.engines import get_engine
from oracles.transformersjs import Outcome, render_directly
from tests.support.corpus import PINNED_NOW, case_request, load_conversations
from tests.support.shared_data import require_shared, template_files

require_shared()

TEMPLATES = {path.stem: path.read_text(encoding="utf-8") for path in template_files()}
CASES = load_conversations()

#: What transformers.js leaves to the caller, each with a template that shows it.
CALLER_CASES = [
    {
        # Null-valued keys reach the template (Python drops them).
        "name": "null-content-kept",
        "template": "{% for m in messages %}{{ m.role }}:{{ m.content is none }};"
        "{{ m.reasoning_content is defined }}{% endfor %}",
        "messages": [{"role": "user", "content": None}, {"role": "assistant", "thinking": "x"}],
    },
    {
        # continue_final_message is one more template variable, not a continued message.
        "name": "continue-final-message-is-a-variable",
        "template": "{% for m in messages %}<{{ m.content }}>{% endfor %}"
        "|{{ continue_final_message }}",
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yes"}],
        "continue_final_message": True,
    },
    {
        # Only the seven standard special tokens, and only those that are set.
        "name": "special-tokens",
        "template": "[{{ bos_token }}|{{ eos_token is defined }}|{{ boi_token is defined }}]",
        "messages": [],
        "special_tokens": {"bos_token": "<s>", "eos_token": "", "boi_token": "<img>"},
    },
    {
        # Kwargs win over special tokens; option names are options, not variables.
        "name": "kwargs",
        "template": "{{ bos_token }}|{{ tokenize is defined }}|{{ tools }}|{{ flag }}",
        "messages": [{"role": "user", "content": "Hi"}],
        "special_tokens": {"bos_token": "<s>"},
        "kwargs": {"bos_token": "<BOS>", "tokenize": True, "tools": [1], "flag": 1.5},
    },
    {
        "name": "date",
        "template": "{{ strftime_now('%d %b %Y %H:%M') }} {{ strftime_now('%B') }}",
        "messages": [],
    },
]


def _filled(case: dict[str, Any]) -> dict[str, Any]:
    defaults = {
        "tools": None, "documents": None, "add_generation_prompt": False,
        "continue_final_message": False, "special_tokens": {}, "kwargs": {},
    }  # fmt: skip
    return {**defaults, **case}


PAIRS = [(name, _filled(case)) for name in TEMPLATES for case in CASES]
PAIRS += [(case["name"], _filled(case)) for case in CALLER_CASES]


def _template(name: str, case: dict[str, Any]) -> str:
    return case.get("template") or TEMPLATES[name]


def engine_outcome(template: str, case: dict[str, Any]) -> Outcome:
    request = case_request(case, template)
    try:
        return ("ok", render_with(get_engine("transformers.js"), request).prompt)
    except TemplateProblem as problem:
        return ("error", problem.type, problem.message)


@cache
def direct_outcomes() -> dict[tuple[str, str], Outcome]:
    """Every pair rendered by @huggingface/jinja, in one Node run."""
    fields = ("messages", "tools", "documents", "add_generation_prompt")
    fields += ("continue_final_message", "special_tokens", "kwargs")
    cases = [
        {"template": _template(name, case), **{key: case[key] for key in fields}}
        for name, case in PAIRS
    ]
    outcomes = render_directly(cases, now=PINNED_NOW)
    keys = [(name, case["name"]) for name, case in PAIRS]
    return dict(zip(keys, outcomes, strict=True))


@pytest.mark.parametrize("template", [*TEMPLATES, "caller-cases"])
def test_engine_renders_as_hf_jinja(template: str) -> None:
    caller = template == "caller-cases"
    pairs = [(n, c) for n, c in PAIRS if ("template" in c) == caller and (caller or n == template)]
    assert pairs
    differ = []
    for name, case in pairs:
        expected = direct_outcomes()[(name, case["name"])]
        if engine_outcome(_template(name, case), case) != expected:
            differ.append(case["name"])
    assert differ == []


def test_the_reference_renders_most_pairs() -> None:
    """A corpus @huggingface/jinja refuses would make the comparison meaningless."""
    outcomes = list(direct_outcomes().values())
    assert sum(outcome[0] == "ok" for outcome in outcomes) >= 0.75 * len(outcomes)
    assert len(outcomes) == len(TEMPLATES) * len(CASES) + len(CALLER_CASES)
