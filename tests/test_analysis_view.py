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


def test_a_broken_round_trip_shows_both_sides_of_its_first_difference(client) -> None:
    """The prefix section's round trips show what the cache holds and what the next prompt
    has around the first differing character, as the Response view does, the parts after
    it marked: TEMPLATE writes " (last)" after the last message only, so the next request
    writes "Bye" without it."""
    data = {
        "template": TEMPLATE,
        "messages": json.dumps(CHAT),
        "add_generation_prompt": "on",
        "completion": "Good bye.",
        "view": "analysis",
    }
    html = client.post("/fragments/output", data=data).get_data(as_text=True)
    table = html.split('id="round-trip-table"', 1)[1].split("</table>", 1)[0]
    rows = {
        unescape(re.sub(r"<[^>]+>", "", row.split("</td>", 1)[0])): row
        for row in re.findall(r"<tr><td>(.*?)</tr>", table, re.S)
    }
    row = rows[next(name for name in rows if name.startswith("llama.cpp"))]
    assert "<td>no</td>" in row
    sides = re.findall(r'<code class="ws">(.*?)</code>', row, re.S)
    assert len(sides) == 2, row
    expected, actual = (unescape(side) for side in sides)
    # 60 characters either side: the shared part, then each side's own.
    assert re.fullmatch(
        r".{57}Bye<span class=\"delete\"> \(last\)<\|im_end\|>.*</span>", expected, re.S
    ), expected
    assert re.fullmatch(r".{57}Bye<span class=\"insert\"><\|im_end\|>\n.*</span>", actual, re.S), (
        actual
    )
    assert "this prompt + completion" in row and "the next prompt" in row
