"""The limits in force bound every sandbox task, not only renders: analysis probes and
the command check run under `PLAYGROUND_OUTPUT_CHARS` and `PLAYGROUND_TEMPLATE_KB`."""

from __future__ import annotations

import pytest

from app.web.factory import create_app
from tests.support import UNLIMITED_WRITES

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: ChatML, over 1 KiB of source: the command check finds the `chatml` built-in for it.
BIG_CHATML = "{#" + "x" * 2000 + "#}" + CHATML
#: A template that writes 3,000 characters only when given tools: its tool probe
#: renders within the default limit, and not within 2,000 characters.
WORDY_WITH_TOOLS = (
    "{% for m in messages %}{{ m.content }}{% endfor %}"
    "{% if tools %}{{ 'x' * 3000 }}{% for t in tools %}{{ t.function.name }}{% endfor %}"
    "{% endif %}"
)
HELLO = [{"role": "user", "content": "Hi"}]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """An application whose renders write at most 2,000 characters of 1 KiB templates."""
    data = tmp_path_factory.mktemp("small")
    config = {"TESTING": True, "DATA_DIR": str(data), "OUTPUT_CHARS": 2000, "TEMPLATE_KB": 1}
    application = create_app({**config, **UNLIMITED_WRITES})
    yield application.test_client()
    application.extensions["sandbox_pool"].close()
    application.extensions["source_workers"].close()


def test_capability_probes_write_within_the_output_limit(client, small):
    body = {"template": WORDY_WITH_TOOLS, "messages": HELLO}
    assert client.post("/api/analyze", json=body).json["capabilities"]["supports_tools"]
    limited = small.post("/api/analyze", json=body)
    assert limited.status_code == 200
    assert limited.json["capabilities"]["supports_tools"] is False


def test_analysis_refuses_a_template_over_the_size_limit(client, small):
    body = {"template": BIG_CHATML, "messages": HELLO}
    assert client.post("/api/analyze", json=body).status_code == 200
    refused = small.post("/api/analyze", json=body)
    assert (refused.status_code, refused.json["error"]["limit"]) == (422, "template_bytes")


def test_command_check_refuses_a_template_over_the_size_limit(client, small):
    body = {"template": BIG_CHATML, "kwargs": {}}
    assert client.post("/api/command", json=body).json["builtin"] == "chatml"
    refused = small.post("/api/command", json=body)
    assert (refused.status_code, refused.json["error"]["limit"]) == (422, "template_bytes")
