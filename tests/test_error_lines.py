"""The line a syntax error is reported at is the line Jinja (and transformers) name.

Jinja finds a missing `%}` or `}}` only at the next token, which is often on the next
line: we report that line, as `TemplateSyntaxError.lineno` does, and say in the message
on which line the unclosed tag starts.
"""

from __future__ import annotations

import pytest
from jinja2 import TemplateSyntaxError
from transformers.utils.chat_template_utils import _compile_jinja_template

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines import render_exactly

HELLO = [{"role": "user", "content": "Hi"}]


def broken(tag_line: int, tag: str, after: str) -> str:
    """A template whose line `tag_line` holds `tag` (missing its end), then `after`."""
    return "text\n" * (tag_line - 1) + tag + "\n" + after


CASES = [
    (line, tag, after)
    for line in (1, 2, 80, 81, 200)
    for tag, after in [
        ("{% if messages", "a\n{% endif %}\n"),  # missing %}, next token on the next line
        ("{% if messages a", "{% endif %}\n"),  # missing %}, next token on the same line
        ("{{ messages[0].content", "b\n"),  # missing }}
        ("{% for m in messages", ""),  # missing %} at the end of the template
        ("{{ messages", ""),  # missing }} at the end of the template
    ]
]


def jinja_lineno(template: str) -> int:
    """The line transformers' own compiled environment raises the syntax error at."""
    with pytest.raises(TemplateSyntaxError) as raised:
        _compile_jinja_template(template)
    return raised.value.lineno


def our_problem(template: str) -> TemplateProblem:
    with pytest.raises(TemplateProblem) as raised:
        render_exactly(RenderRequest(template=template, messages=HELLO))
    return raised.value


@pytest.mark.parametrize(("tag_line", "tag", "after"), CASES)
def test_syntax_error_line_is_jinjas_lineno(tag_line: int, tag: str, after: str) -> None:
    template = broken(tag_line, tag, after)
    found = our_problem(template)
    assert found.type == "TemplateSyntaxError"
    assert found.line == jinja_lineno(template)


@pytest.mark.parametrize(("tag_line", "tag", "after"), CASES)
def test_an_unclosed_tag_names_the_line_it_starts_on(tag_line: int, tag: str, after: str) -> None:
    template = broken(tag_line, tag, after)
    found = our_problem(template)
    if found.line != tag_line:
        assert f"the tag that starts on line {tag_line} is not closed" in found.message
    else:
        assert "is not closed" not in found.message


def test_a_tag_spanning_lines_that_is_closed_adds_nothing() -> None:
    found = our_problem("{% if messages\n   and %}x{% endif %}")
    assert found.line == 2 and "is not closed" not in found.message
