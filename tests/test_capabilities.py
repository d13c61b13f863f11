"""The llama.cpp engine's capabilities against llama-server's /props `chat_template_caps`."""

from __future__ import annotations

from typing import Any

import pytest

from app.render.engines.llamacpp.capabilities import CAPABILITIES, detect_capabilities
from oracles.llamacpp import KNOWN_CAPS_DIFFERENCES, RENDERS, load
from tests.support.shared_data import TEMPLATES_DIR, require_shared

require_shared()


def recordings() -> dict[str, Any]:
    """/props chat_template_caps per shared template, as llama.cpp's library detects them."""
    return load(RENDERS)


def template_names() -> list[str]:
    return list(recordings()["templates"])


@pytest.mark.parametrize("name", template_names())
def test_caps_match_llama_server(name: str) -> None:
    expected = recordings()["templates"][name]["caps"]
    actual = detect_capabilities((TEMPLATES_DIR / name).read_text(encoding="utf-8"))
    if name in KNOWN_CAPS_DIFFERENCES:
        assert actual != expected, "a known difference is gone: remove it"
    else:
        assert actual == expected


def test_known_caps_differences_are_recorded_templates() -> None:
    for name, cause in KNOWN_CAPS_DIFFERENCES.items():
        assert name in recordings()["templates"]
        assert cause.strip()


def test_keys_are_llama_servers() -> None:
    assert set(detect_capabilities("{{ messages }}")) == set(CAPABILITIES)


CHATML = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"


def test_a_plain_template() -> None:
    caps = detect_capabilities(CHATML)
    assert caps["supports_system_role"] and caps["supports_string_content"]
    assert not caps["supports_tools"] and not caps["supports_tool_calls"]
    assert not caps["supports_typed_content"] and not caps["supports_preserve_reasoning"]


def test_a_template_without_system_role() -> None:
    template = (
        "{% if messages[0].role == 'system' %}{{ raise_exception('no system') }}{% endif %}"
        + CHATML
    )
    assert not detect_capabilities(template)["supports_system_role"]


def test_tools_calls_and_object_arguments() -> None:
    template = (
        "{% for t in tools %}{{ t.function.name }}{% endfor %}"
        "{% for m in messages %}{% for c in m.tool_calls or [] %}"
        "{{ c.function.name }}({{ c.function.arguments.arg }}){% endfor %}{% endfor %}"
    )
    caps = detect_capabilities(template)
    assert caps["supports_tools"] and caps["supports_tool_calls"]
    assert caps["supports_object_arguments"] and caps["supports_parallel_tool_calls"]


def test_typed_content_reasoning_and_effort() -> None:
    template = (
        "{% for m in messages %}{% if m.content is string %}{{ m.content }}"
        "{% else %}{% for part in m.content %}{{ part.text }}{% endfor %}{% endif %}"
        "{{ m.reasoning_content }}{% endfor %}{{ reasoning_effort }}"
    )
    caps = detect_capabilities(template)
    assert caps["supports_preserve_reasoning"] and caps["supports_reasoning_effort"]
    typed = (
        "{% for m in messages %}{% for part in m.content %}{{ part.text }}{% endfor %}{% endfor %}"
    )
    caps = detect_capabilities(typed)
    assert caps["supports_typed_content"] and not caps["supports_string_content"]
