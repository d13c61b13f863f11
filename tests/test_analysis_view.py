"""The page's Analysis view: the prefix-stability chart says what it shows."""

from __future__ import annotations

import json
import re
from html import unescape

CHAT = [
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": "Hi"},
    {"role": "user", "content": "How are you?"},
    {"role": "assistant", "content": "Fine"},
    {"role": "user", "content": "Bye"},
]
#: Drops the reasoning of earlier turns: the second request shares only part of the first.
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
    "{% if loop.last %} (last){% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def chart(client) -> str:
    data = {"template": TEMPLATE, "messages": json.dumps(CHAT), "view": "analysis"}
    html = client.post("/fragments/output", data=data).get_data(as_text=True)
    return html.split('id="prefix-chart"', 1)[1].split("</svg>", 1)[0]


def test_the_prefix_chart_labels_each_bar_and_has_a_legend(client) -> None:
    svg = chart(client)
    texts = [unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    assert "turn 1 → 2" in texts and "turn 2 → 3" in texts
    assert any(re.fullmatch(r"\d+(\.\d)?% reused", t) for t in texts), texts
    assert any("kept in the KV cache" in t for t in texts)
    assert any("computed again" in t for t in texts)
