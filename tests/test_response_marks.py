"""Which engines the Response view marks as reading the completion differently: every
engine outside the largest group of engines that read it alike, or every reading engine
when no group is the largest; never one that read nothing."""

from __future__ import annotations

from app.answers.reading import EngineResponse, mark_disagreements
from app.render.answer import ParsedAnswer, ToolCall


def _engine(name: str, answer: ParsedAnswer | None) -> EngineResponse:
    return EngineResponse(name.lower(), name, answer=answer)


CALL = ParsedAnswer("p", tool_calls=(ToolCall("get_weather", '{"city": "Paris"}', "a"),))
#: The same call with other spacing and id: it means the same.
SAME_CALL = ParsedAnswer("q", tool_calls=(ToolCall("get_weather", '{"city":"Paris"}', "b"),))
TEXT = ParsedAnswer("r", content='<tool_call>{"name": "get_weather"}</tool_call>')
ERROR = ParsedAnswer("s", error="does not match the expected format")


def _marks(*engines: EngineResponse) -> dict[str, tuple[bool, tuple[str, ...]]]:
    mark_disagreements(list(engines))
    return {e.engine_name: (e.differs, e.differs_from) for e in engines}


def test_the_odd_one_out_is_marked_even_when_it_comes_first():
    marks = _marks(_engine("A", TEXT), _engine("B", CALL), _engine("C", SAME_CALL))
    assert marks == {"A": (True, ("B", "C")), "B": (False, ()), "C": (False, ())}


def test_two_engines_that_disagree_are_both_marked():
    marks = _marks(_engine("A", CALL), _engine("B", ERROR))
    assert marks == {"A": (True, ("B",)), "B": (True, ("A",))}


def test_a_tie_between_the_largest_groups_marks_every_reading_engine():
    engines = [_engine("A", CALL), _engine("B", SAME_CALL), _engine("C", TEXT)]
    engines += [_engine("D", TEXT), _engine("E", None)]
    marks = _marks(*engines)
    assert marks == {
        "A": (True, ("C", "D")),
        "B": (True, ("C", "D")),
        "C": (True, ("A", "B")),
        "D": (True, ("A", "B")),
        "E": (False, ()),
    }


def test_engines_that_agree_or_read_nothing_are_not_marked():
    marks = _marks(_engine("A", CALL), _engine("B", None), _engine("C", SAME_CALL))
    assert marks == {"A": (False, ()), "B": (False, ()), "C": (False, ())}
    assert _marks(_engine("A", TEXT)) == {"A": (False, ())}


def test_every_minority_is_marked_against_the_majority():
    engines = [_engine(n, CALL) for n in "ABC"] + [_engine("D", TEXT), _engine("E", ERROR)]
    marks = _marks(*engines)
    assert [name for name, (marked, _) in marks.items() if marked] == ["D", "E"]
    assert marks["D"][1] == ("A", "B", "C", "E")
