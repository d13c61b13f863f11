"""One apply: the thinking default, and the prefill the params write.

llama.cpp's `common_chat_templates_support_enable_thinking` (common/chat.cpp, b11434)
applies the template to one user message ("test", generation prompt, thinking on,
reasoning format deepseek) and returns the `supports_thinking` of the chat params that
come out. Here the render's default (`Applied.thinking`: a family's prompt hooks, or
the autoparser's reasoning) and the params the answer parser reads (a family's
`params`, or the autoparser's generator) are two paths to that answer: for every shared
template they must give the same one.

A continued final message is written after the prompt as the params' generation prompt
(chat.cpp: `data.prompt += data.generation_prompt`), so a request whose params fail is
refused by the render with the error the answer side reports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines.llamacpp import LlamaCppEngine
from app.render.engines.llamacpp.answers import read_completion
from app.render.engines.llamacpp.apply.templates_apply import apply
from app.render.limits import DEFAULT_LIMITS
from tests.support.shared_data import TEMPLATES_DIR, needs_shared, template_files

pytestmark = needs_shared


@pytest.mark.parametrize("path", template_files(), ids=lambda path: path.name)
def test_thinking_default_is_the_params_supports_thinking(path: Path) -> None:
    request = RenderRequest(
        template=path.read_text(encoding="utf-8"),
        messages=[{"role": "user", "content": "test"}],
        add_generation_prompt=True,
    )
    applied = apply(request, DEFAULT_LIMITS, "deepseek", {"enable_thinking": True})
    params, derived_by = applied.params
    assert applied.thinking == params.supports_thinking, derived_by


#: A tool whose parameters llama.cpp's schema reader refuses (an empty enum).
BAD_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "description": "d",
            "parameters": {"type": "object", "properties": {"a": {"enum": []}}},
        },
    }
]


@pytest.mark.parametrize("name", ["Qwen-Qwen3-0.6B.jinja", "Qwen3.5-4B.jinja"])
def test_a_prefill_whose_params_fail_is_refused_with_their_error(name: str) -> None:
    """The autoparser (Qwen3) and a family's handler (Qwen3.5: Qwen3-Coder's)."""
    request = RenderRequest(
        template=(TEMPLATES_DIR / name).read_text(encoding="utf-8"),
        messages=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
        tools=BAD_TOOLS,
    )
    answer = read_completion(request, "x", DEFAULT_LIMITS)
    assert answer.error is not None
    assert answer.error.endswith(
        "JSON schema error at #/properties/a: enum must be a non-empty array"
    )
    with pytest.raises(TemplateProblem) as raised:
        LlamaCppEngine().render(request, DEFAULT_LIMITS)
    assert raised.value.message == answer.error
