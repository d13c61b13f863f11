"""The page's Diff view: both sides named, and counts that agree with the lines shown."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

HELLO = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello"},
    {"role": "user", "content": "Bye"},
]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
)


def diff_view(client, compare_template: str) -> str:
    data = {
        "template": TEMPLATE,
        "messages": json.dumps(HELLO),
        "view": "diff",
        "compare_template": compare_template,
    }
    html = client.post("/fragments/output", data=data).get_data(as_text=True)
    return html.split('id="view-diff"', 1)[1].split("</section>", 1)[0]


def spans_text(html: str, kind: str) -> str:
    return "".join(unescape(t) for t in re.findall(rf'<span class="{kind}">([^<]*)</span>', html))


COMPARED = [
    TEMPLATE.replace("<|im_start|>", "<start_of_turn>"),  # every turn changes
    TEMPLATE.replace("{{ m.content }}", "{{ m.content | upper }}"),  # contents only
    TEMPLATE + "{% if true %}<extra>\nline\n{% endif %}",  # lines added at the end
    "{% for m in messages if m.role != 'system' %}" + TEMPLATE.split("%}", 1)[1],  # removed
]


@pytest.mark.parametrize("compared", COMPARED)
def test_counts_agree_with_the_lines_shown(client, compared: str) -> None:
    html = diff_view(client, compared)
    stats = unescape(re.search(r'id="diff-stats">(.*?)</p>', html, re.S).group(1))
    numbers = re.search(
        r"(\d+) lines? removed, (\d+) lines? added \((\d+) characters deleted, "
        r"(\d+) inserted, (\d+) unchanged\)",
        re.sub(r"(?<=\d),(?=\d)", "", stats),
    )
    assert numbers, stats
    removed, added, deleted, inserted, _ = map(int, numbers.groups())
    unified = html.split('id="diff-unified"', 1)[1].split("</pre>", 1)[0]
    assert unified.count("sign-del") == removed
    assert unified.count("sign-ins") == added
    assert len(spans_text(unified, "delete")) == deleted
    assert len(spans_text(unified, "insert")) == inserted
    side = html.split('id="diff-side"', 1)[1]
    assert side.count("cell del") == removed and side.count("cell ins") == added


def test_both_sides_are_named_in_column_headers(client) -> None:
    html = diff_view(client, COMPARED[0])
    heads = [unescape(h) for h in re.findall(r'class="side-head[^"]*">(.*?)</', html)]
    assert heads == ["− this template", "+ the compared template"]
    assert re.search(r'id="diff-legend"[^>]*>.*this template.*the compared template', html, re.S)
