"""Edge-LLM's reading, made faster (issue 41: 100 kB of call lines took 60 ms), reads as
before: plain call lines read without Python's parser (`simple_call`), and whether the
template loads kept for the templates last asked about (`check_loads`).

The full reading is Edge-LLM's own: `python_call`'s expression, `ast.parse` and
`ast.literal_eval` for the arguments, `json.dumps` for their text. Generated lines, plain
and not (escapes, keywords as names, odd literals and blanks, control characters, lone
surrogates), must get the same name and arguments text whenever `simple_call` takes them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.problems import TemplateProblem
from app.render.engines.edge_llm.answers.calls import (
    ServerFailure,
    arguments_json,
    python_arguments,
    python_call,
)
from app.render.engines.edge_llm.answers.simple_calls import simple_call
from app.render.engines.edge_llm.loading import check_loads, loaded
from app.render.limits import DEFAULT_LIMITS, RenderLimits

#: Characters that matter to a Python string or call: quotes, escapes, brackets, blanks
#: of every kind, controls, separators, a lone surrogate, and plain letters.
ODD = "\"'\\()=,# \t\x00\x01\x1f\x7f\x85\xa0\u2028\u3000\ud800éa1"
names = st.sampled_from(["city", "a", "_x", "match", "if", "True", "None", "é", "x1", "1x"])
strings = st.text(alphabet=st.sampled_from(ODD), max_size=8)
values = st.one_of(
    strings.map(lambda text: f'"{text}"'),
    strings.map(lambda text: f"'{text}'"),
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(["True", "False", "None", "007", "-0", "- 1", "1.5", "1_0", "0x1"]),
    st.sampled_from(['"a" "b"', "Truex", "[1]", "{}", 'b"x"', "x"]),
)
blanks = st.sampled_from(["", " ", "\t", "  ", "\xa0"])


@st.composite
def call_lines(draw: st.DrawFn) -> str:
    """A line shaped like a call, with arguments plain or not."""
    arguments = [
        draw(blanks) + draw(names) + draw(blanks) + "=" + draw(blanks) + draw(values)
        for _ in range(draw(st.integers(0, 4)))
    ]
    inside = ",".join(arguments) + draw(st.sampled_from(["", ",", " ,", ", "]))
    ending = draw(st.sampled_from(["", ",", " , ", ")", " x", "\t"]))
    return draw(blanks) + draw(names) + "(" + inside + ")" + ending


def full_reading(line: str) -> tuple[str, str] | str | None:
    """(name, arguments text) as Edge-LLM reads the line; its failure's text if it fails."""
    found = python_call(line)
    if found is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        try:
            return found[0], arguments_json(python_arguments(found[1]))
        except ServerFailure as failure:
            return f"fails: {failure}"


@settings(max_examples=1500, deadline=None)
@example('f(a="\ud800")')  # Python's parser cannot encode a lone surrogate: a failure
@example("f(a='\x00', b=1)")  # nor read NUL
@example("f(a='\x0c')")
@given(st.one_of(call_lines(), st.text(alphabet=st.sampled_from(ODD + "fg"), max_size=20)))
def test_a_line_taken_reads_as_the_full_reading(line: str) -> None:
    simple = simple_call(line)
    if simple is not None:
        assert simple == full_reading(line)


@pytest.mark.parametrize(
    "line",
    [
        'get_weather(city="Paris 00042")',
        "  f(a='say \"hi\"', b=-12, c=True, d=None,) ,",
        'f(a=1, a="again", b=False)',
        "f(match=0)",
    ],
)
def test_plain_lines_are_taken(line: str) -> None:
    # Taken, so the fast path is the one the benchmark's call lines go through.
    assert simple_call(line) is not None
    assert simple_call(line) == full_reading(line)


@pytest.mark.parametrize(
    "source",
    ["{{ messages[0].content }}", "{% if %}", "{{ x }}\n{% endfor %}", "x" * 10],
)
def test_whether_a_template_loads_is_what_loading_says_every_time(source: str) -> None:
    # The reader asks `check_loads`, which keeps the outcome: the first answer and the
    # kept one are the problem `loaded` raises (a new one each time), or none.
    def outcome(check: Callable[[str, RenderLimits], object]) -> tuple | None:
        try:
            check(source, DEFAULT_LIMITS)
        except TemplateProblem as problem:
            return problem.type, problem.message, problem.line, problem.column
        return None

    expected = outcome(loaded)
    first, kept = outcome(check_loads), outcome(check_loads)
    if expected is None:
        assert first is None and kept is None
    else:
        assert first is not None and kept is not None
        assert first == kept == expected
        assert "Edge-LLM would not load" in expected[1]


def test_the_size_limit_is_checked_before_the_kept_outcome() -> None:
    source = "{{ x }}" * 10
    check_loads(source, DEFAULT_LIMITS)  # kept: it loads
    with pytest.raises(TemplateProblem) as refused:
        check_loads(source, replace(DEFAULT_LIMITS, template_bytes=10))
    assert refused.value.limit == "template_bytes"
