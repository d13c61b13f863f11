"""One apply decides whether a template thinks by default.

llama.cpp's `common_chat_templates_support_enable_thinking` (common/chat.cpp, b11434)
applies the template to one user message ("test", generation prompt, thinking on,
reasoning format deepseek) and returns the `supports_thinking` of the chat params that
come out. Here the render's default (`Applied.thinking`: a family's prompt hooks, or
the autoparser's reasoning) and the params the answer parser reads (a family's
`params`, or the autoparser's generator) are two paths to that answer: for every shared
template they must give the same one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.render.core import RenderRequest
from app.render.engines.llamacpp.apply.templates_apply import apply
from app.render.limits import DEFAULT_LIMITS
from tests.support.shared_data import needs_shared, template_files

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
