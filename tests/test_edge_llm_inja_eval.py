"""The Edge-LLM Inja evaluator: each callback's argument rules and the semantics that
differ from Jinja (missing values, null loops, JSON type errors, Python-style output).

Expected values are what Edge-LLM's C++ (injaCallbacks.cpp and its vendored inja.hpp at
guswns531/TensorRT-Edge-LLM 83f5f76) does for the input, worked out from that source.
"""

from __future__ import annotations

import pytest

from app.problems import TemplateProblem
from app.render.engines.edge_llm.inja.callbacks import CALLBACKS, VARIADIC, accepts, resolve
from app.render.engines.edge_llm.inja.render import LoadError, RenderError, load, render
from app.render.limits import RenderLimits
from tests.support.timing import cpu_seconds

LIMITS = RenderLimits()


def run(source: str, **context: object) -> str:
    return render(load(source), dict(context), LIMITS)


def fails(source: str, **context: object) -> str:
    with pytest.raises(RenderError) as info:
        run(source, **context)
    return info.value.message


# ---------------------------------------------------------------- the name/arity table


@pytest.mark.parametrize(
    ("name", "count", "kind"),
    [
        ("tojson", 1, "callback"),
        ("tojson", 2, "callback"),
        ("tojson", 3, None),
        ("strip", 2, "callback"),
        ("trim", 2, None),
        ("split", 1, None),
        ("split", 3, "callback"),
        ("range", 1, "builtin"),
        ("range", 2, "callback"),
        ("range", 4, "callback"),
        ("sort", 1, "builtin"),
        ("sort", 2, "callback"),
        ("selectattr", 1, "callback"),
        ("selectattr", 0, None),
        ("namespace", 0, "callback"),
        ("namespace", 6, "callback"),
        ("default", 2, "builtin"),
        ("join", 1, None),
        ("indent", 2, None),
        ("from_json", 1, None),
        ("append", 2, None),
        ("format", 2, None),
        ("replace", 3, "builtin"),
        ("items", 1, "callback"),
        ("keys", 1, None),
        ("upper", 1, "builtin"),
        ("raise_exception", 1, "callback"),
        ("strftime_now", 1, "callback"),
    ],
)
def test_resolution_follows_inja_find_function(name: str, count: int, kind: str | None) -> None:
    assert resolve(name, count) == kind
    assert accepts(name, count) is (kind is not None)


def test_table_has_every_edge_llm_callback() -> None:
    edge = {"tojson", "safe", "string", "trim", "strip", "lstrip", "rstrip", "startswith",
            "endswith", "split", "get", "items", "list", "fromjson", "reject", "dictsort",
            "sort", "map", "selectattr", "rejectattr", "unique", "range", "namespace",
            "raise_exception", "strftime_now"}  # fmt: skip
    assert edge <= set(CALLBACKS)
    assert VARIADIC in CALLBACKS["selectattr"]


# ---------------------------------------------------------------- callbacks


@pytest.mark.parametrize(
    ("source", "context", "expected"),
    [
        (
            "{{ x|tojson }}",
            {"x": {"b": 1, "a": [1, 2.5, None, True]}},
            '{"b": 1, "a": [1, 2.5, null, true]}',
        ),
        (
            "{{ x|tojson(indent=2) }}",
            {"x": {"a": [1], "b": {}}},
            '{\n  "a": [\n    1\n  ],\n  "b": {}\n}',
        ),
        ("{{ x|tojson(separators=(',', ':')) }}", {"x": {"a": [1, 2]}}, '{"a":[1,2]}'),
        ("{{ x|tojson(ensure_ascii=true) }}", {"x": "é\n"}, '"\\u00e9\\n"'),
        ("{{ x|tojson }}", {"x": "é\x01"}, '"é\\u0001"'),
        ("{{ 5|string ~ true|string ~ none|string }}", {}, "5TrueNone"),
        ("[{{ '  a b \n'|trim }}]", {}, "[a b]"),
        (
            "[{{ 'xxaxx'.strip('x') }}|{{ 'xxa'|lstrip('x') }}|{{ 'axx'.rstrip('x') }}]",
            {},
            "[a|a|a]",
        ),
        ("{{ x.startswith('1') }}", {"x": 12}, "True"),
        ("{{ 'abc'.endswith('bc') }}{{ 'abc'.endswith('abcd') }}", {}, "TrueFalse"),
        (
            "{{ 'a,b,c'.split(',') }}|{{ 'a,b,c'.split(',', 1) }}",
            {},
            "['a', 'b', 'c']|['a', 'b,c']",
        ),
        (
            "{{ x.get('a') }}|{{ x.get('z') }}|{{ x.get('z', 7) }}|{{ 3|get('a', 8) }}",
            {"x": {"a": 1}},
            "1||7|8",
        ),
        ("{{ x|items }}|{{ [1]|items }}", {"x": {"k": "v"}}, "[['k', 'v']]|[]"),
        ("{{ x|list }}|{{ 'ab'|list }}", {"x": {"k": 1, "j": 2}}, "['k', 'j']|[]"),
        ("{{ (x|fromjson).b }}", {"x": '{"b": [1]}'}, "[1]"),
        ("{{ [1, 2, 1]|reject('equalto', 1) }}", {}, "[2]"),
        ("{{ x|dictsort }}", {"x": {"b": 1, "a": 2}}, "[['a', 2], ['b', 1]]"),
        ("{{ x|sort(attribute='n') }}", {"x": [{"n": 2}, {"n": 1}]}, "[{'n': 1}, {'n': 2}]"),
        ("{{ x|map(attribute='n') }}|{{ ['a']|map('upper') }}", {"x": [{"n": 2}]}, "[2]|['A']"),
        (
            "{{ x|selectattr('a') }}|{{ x|rejectattr('a') }}",
            {"x": [{"a": 1}, {"a": 0}, {}]},
            "[{'a': 1}]|[{'a': 0}, {}]",
        ),
        (
            "{{ x|selectattr('a', 'equalto', 0) }}|{{ x|selectattr('a', 'defined')|length }}",
            {"x": [{"a": 1}, {"a": 0}, {}]},
            "[{'a': 0}]|2",
        ),
        (
            "{{ x|selectattr('f.n', 'none') }}",
            {"x": [{"f": {"n": None}}, {"f": {}}]},
            "[{'f': {'n': None}}]",
        ),
        ("{{ none|selectattr('a') }}", {}, "[]"),
        ("{{ [1, 2, 1, 2.0]|unique }}", {}, "[1, 2]"),
        (
            "{{ range(3) }}|{{ range(1, 3) }}|{{ range(5, 0, -2) }}",
            {},
            "[0, 1, 2]|[1, 2]|[5, 3, 1]",
        ),
        ("{% set ns = namespace(a=1, b='x') %}{{ ns.a }}{{ ns.b }}{{ namespace() }}", {}, "1x{}"),
        ("{{ x|safe }}", {"x": [1]}, "[1]"),
    ],
)
def test_callbacks(source: str, context: dict, expected: str) -> None:
    assert run(source, **context) == expected


@pytest.mark.parametrize(
    ("source", "context", "message"),
    [
        ("{{ raise_exception('No tools') }}", {}, "raise_exception: No tools"),
        ("{{ 'a'.split('') }}", {}, "split: split delimiter cannot be empty"),
        ("{{ 1|tojson('x') }}", {}, "tojson: unsupported keyword argument"),
        ("{{ [1]|reject('odd', 1) }}", {}, "reject: reject currently supports equalto on arrays"),
        ("{{ 'x'|dictsort }}", {}, "dictsort: dictsort expects an object"),
        ("{{ x|sort(attribute='n') }}", {"x": [{"n": 1}, {}]}, "sort: sort attribute is missing"),
        ("{{ [1]|map('title') }}", {}, "map: unsupported map filter: title"),
        ("{{ [{}]|map('n') }}", {}, "map: map attribute is missing: n"),
        (
            "{{ [{'n': 1}]|selectattr('n', 'odd') }}",
            {},
            "selectattr: unsupported attribute test: odd",
        ),
        (
            "{{ [{'n': 1}]|selectattr('n', 'equalto') }}",
            {},
            "selectattr: equalto requires a comparison value",
        ),
        (
            "{{ 'a'|selectattr('n') }}",
            {},
            "selectattr: expected a sequence, attribute, optional test, and optional value",
        ),
        ("{{ 3|unique }}", {}, "unique: unique expects a sequence"),
        ("{{ range(1, 2, 0) }}", {}, "range: range step cannot be zero"),
        ("{{ range(1, 2, 3, 4) }}", {}, "range: range expects two or three integer arguments"),
        (
            "{{ range('a', 2) }}",
            {},
            "range: [json.exception.type_error.302] type must be number, but is string",
        ),
        ("{{ namespace(1) }}", {}, "namespace: namespace expects name/value pairs"),
        (
            "{{ 'x'.strip(1) }}",
            {},
            "strip: [json.exception.type_error.302] type must be string, but is number",
        ),
    ],
)
def test_callback_errors(source: str, context: dict, message: str) -> None:
    assert fails(source, **context) == message


def test_strftime_now_formats_the_time() -> None:
    assert len(run("{{ strftime_now('%Y') }}")) == 4


def test_unregistered_counts_fail_at_load() -> None:
    for source in ("{{ x|tojson(indent=2, ensure_ascii=false) }}", "{{ x|indent(2) }}",
                   "{{ x.split() }}", "{{ x|trim('a') }}"):  # fmt: skip
        with pytest.raises(LoadError) as info:
            load(source)
        assert "unknown function" in str(info.value)


# ---------------------------------------------------------------- semantics unlike Jinja


@pytest.mark.parametrize(
    ("source", "context", "expected"),
    [
        # A missing value prints nothing and is false where Inja does not insist on it.
        ("[{{ nope }}][{% if nope %}y{% endif %}][{{ not nope }}]", {}, "[][][True]"),
        (
            "{{ nope is defined }}{{ nope is undefined }}{{ x.y is defined }}",
            {"x": {}},
            "FalseTrueFalse",
        ),
        ("{{ nope|default('d') }}|{{ ''|default('d', true) }}|{{ 0|default('d') }}", {}, "d|d|0"),
        ("[{% for t in nope %}x{% endfor %}]", {}, "[]"),
        ("{% set y = nope %}{{ y is none }}", {}, "True"),
        ("{{ nope or 'b' }}|{{ 'a' and 'b' }}|{{ 0 or 0 }}", {}, "b|b|0"),
        # Python-style output of non-strings; null prints nothing.
        (
            "{{ true }}|{{ none }}|{{ [none, false] }}|{{ 1.0 }}|{{ 2.5e-5 }}|{{ 1e15 }}",
            {},
            "True||[None, False]|1.0|2.5e-05|1e+15",
        ),
        ("{{ {'a': 'it\\'s'} }}", {}, "{'a': \"it's\"}"),
        ("{{ x }}", {"x": {"z": 1, "a": 2}}, "{'z': 1, 'a': 2}"),
        # Arithmetic as nlohmann and C++ do it.
        (
            "{{ 7 / 2 }}|{{ 4 / 2 }}|{{ 7 % 3 }}|{{ (0 - 7) % 3 }}|{{ 2 ^ 10 }}|{{ 2.0 * 3 }}",
            {},
            "3.5|2.0|1|-1|1024|6.0",
        ),
        (
            "{{ 'ab' * 3 }}|{{ [1] * 2 }}|{{ 'a' * -1 }}|{{ 1 + 2.5 }}|{{ [1] + [2] }}",
            {},
            "ababab|[1, 1]||3.5|[1, 2]",
        ),
        ("{{ 1 ~ 'a' ~ true ~ none }}", {}, "1aTrueNone"),
        (
            "{{ 1 == 1.0 }}{{ true == 1 }}{{ none < 0 }}{{ 'a' > 1 }}{{ [1] < [1, 0] }}",
            {},
            "TrueFalseTrueTrueTrue",
        ),
        (
            "{{ 'b' in 'abc' }}{{ 'k' in x }}{{ 1 in [1] }}{{ 1 in none }}{{ 'z' not in x }}",
            {"x": {"k": 0}},
            "TrueTrueTrueFalseTrue",
        ),
        # Truthiness: empty containers and zero are false, "0" is true.
        (
            "{% for v in x %}{{ 'T' if v else 'F' }}{% endfor %}",
            {"x": [0, 0.0, "", "0", [], {}, [0], None, False]},
            "FFFTFFTFF",
        ),
        # Strings are bytes to Inja: length counts bytes, slices see nlohmann's size() of 1.
        (
            "{{ 'héllo'|length }}|{{ s[1:] }}|{{ s[:3] }}",
            {"s": "hello"},
            "6||h",
        ),
        ("{% for c in 'ab' %}<{{ c }}>{% endfor %}", {}, "<a><b>"),
        (
            "{{ x[-1] }}|{{ x[5] is defined }}|{{ x[1:] }}|{{ x[::-1] }}",
            {"x": [1, 2, 3]},
            "3|False|[2, 3]|[3, 2, 1]",
        ),
        # Loops: loop variables, filters, tuple loops, break and continue.
        (
            "{% for v in x if v > 1 %}{{ loop.index }}/{{ loop.length }}{{ ',' if not loop.last }}"
            "{% endfor %}",
            {"x": [1, 2, 3]},
            "1/2,2/2",
        ),
        ("{% for k, v in x %}{{ k }}={{ v }};{% endfor %}", {"x": {"b": 1, "a": 2}}, "b=1;a=2;"),
        ("{% for k, v in x|items %}{{ k }}{{ v }}{% endfor %}", {"x": {"q": 1}}, "q1"),
        (
            "{% for v in x %}{% if v == 2 %}{% continue %}{% endif %}{% if v == 4 %}{% break %}"
            "{% endif %}{{ v }}{% endfor %}",
            {"x": [1, 2, 3, 4, 5]},
            "13",
        ),
        (
            "{% for v in x %}{{ loop.previtem }}{{ loop.nextitem }}|{% endfor %}",
            {"x": [1, 2]},
            "2|1|",
        ),
        # Scoping: a loop iteration and a macro call restore plain sets; namespaces persist.
        ("{% set a = 1 %}{% for v in [1, 2] %}{% set a = v %}{% endfor %}{{ a }}", {}, "1"),
        (
            "{% set ns = namespace(a=0) %}{% for v in [1, 2] %}{% set ns.a = ns.a + v %}"
            "{% endfor %}{{ ns.a }}",
            {},
            "3",
        ),
        (
            "{% macro m(a) %}{% set b = a %}{{ b }}{% endmacro %}{% set b = 0 %}{{ m(5) }}{{ b }}",
            {},
            "50",
        ),
        (
            "{% macro m(a, b='d') %}{{ a }}{{ b }}{{ a is defined }}{% endmacro %}"
            "{{ m(nope) }}|{{ m(1, 2) }}|{{ m(b=3, a=4) }}",
            {},
            "dFalse|12True|43True",
        ),
        ("{% set s %}x{{ 1 }}{% endset %}{{ s ~ s }}", {}, "x1x1"),
        ("{{ 'a' if x else 'b' }}|{{ 'a' if not x }}|", {"x": False}, "b|a|"),
        ("{{ loop is none }}", {}, "True"),
        # Builtins.
        (
            "{{ [3, 1, 2]|sort }}|{{ x|join(', ') }}|{{ x|length }}|{{ x|first }}|{{ x|last }}",
            {"x": ["a", 1]},
            "[1, 2, 3]|a, 1|2|a|1",
        ),
        (
            "{{ 'aXb'|upper }}|{{ 'AéB'|lower }}|{{ 'hELLO'|capitalize }}|"
            "{{ 'a-b-a'|replace('a', 'c') }}",
            {},
            "AXB|aéb|Hello|c-b-c",
        ),
        (
            "{{ 2.5|round(0) }}|{{ 1.25|round(1) }}|{{ '42'|int + 1 }}|{{ '1.5'|float }}",
            {},
            "3|1.3|43|1.5",
        ),
        (
            "{{ exists('x') }}{{ existsIn(x, 'k') }}{{ [4, 9, 2]|max }}{{ [4, 9, 2]|min }}",
            {"x": {"k": 5}},
            "TrueTrue92",
        ),
        (
            "{{ 3 is number }}{{ 3 is integer }}{{ 3.0 is integer }}{{ x is mapping }}"
            "{{ x is string }}{{ true is boolean }}{{ true is true }}{{ x is not none }}",
            {"x": {}},
            "TrueTrueFalseTrueFalseTrueTrueTrue",
        ),
    ],
)
def test_semantics(source: str, context: dict, expected: str) -> None:
    assert run(source, **context) == expected


@pytest.mark.parametrize(
    ("source", "context", "message"),
    [
        ("{{ nope + 1 }}", {}, "[inja.exception.render_error] (at 1:4) variable 'nope' not found"),
        (
            "\n{{ x.y == 1 }}",
            {"x": {}},
            "[inja.exception.render_error] (at 2:4) variable 'x.y' not found",
        ),
        (
            "{{ x[0].a|trim }}",
            {"x": []},
            "[inja.exception.render_error] (at 1:9) expression could not be evaluated",
        ),
        (
            "{% for t in tools %}{% endfor %}",
            {"tools": None},
            "[inja.exception.render_error] (at 1:10) for loop requires an iterable",
        ),
        (
            "{% for k, v in 'ab' %}{% endfor %}",
            {},
            "[inja.exception.render_error] (at 1:13) "
            "tuple loop requires an object or pair sequence",
        ),
        ("{{ 'a' + 1 }}", {}, "[json.exception.type_error.302] type must be number, but is string"),
        (
            "{{ x - 'b' }}",
            {"x": "a"},
            "[json.exception.type_error.302] type must be number, but is string",
        ),
        ("{{ x[0] }}", {"x": "abc"}, "[json.exception.type_error.304] cannot use at() with string"),
        (
            "{{ x['a'] }}",
            {"x": [1]},
            "[json.exception.type_error.302] type must be number, but is string",
        ),
        ("{{ 1 / 0 }}", {}, "[inja.exception.render_error] (at 1:6) division by zero"),
        ("{{ 5|upper }}", {}, "[json.exception.type_error.302] type must be string, but is number"),
        ("{{ 'x'|int }}", {}, "stoi"),
        (
            "{{ x[1:] }}",
            {"x": 3},
            "[inja.exception.render_error] (at 1:5) slice requires an array or string",
        ),
        (
            "{% include 'other.jinja' %}",
            {},
            "[inja.exception.render_error] (at 1:12) include 'other.jinja' not found",
        ),
        (
            "{% macro m(a) %}{% endmacro %}{{ m() }}",
            {},
            "[inja.exception.render_error] (at 1:34) missing argument 'a' for macro 'm'",
        ),
        (
            "{% macro m(a) %}{% endmacro %}{{ m(b=1) }}",
            {},
            "[inja.exception.render_error] (at 1:34) unknown argument 'b' for macro 'm'",
        ),
        (
            "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}",
            {},
            "[inja.exception.render_error] (at 1:34) invalid arguments for macro 'm'",
        ),
        ("{{ }}", {}, "[inja.exception.render_error] (at 1:4) empty expression"),
    ],
)
def test_errors(source: str, context: dict, message: str) -> None:
    assert fails(source, **context) == message


def test_render_error_line_for_positionless_errors() -> None:
    with pytest.raises(RenderError) as info:
        run("a\nb\n{{ x - 1 }}", x="s")
    assert info.value.line == 3


# ---------------------------------------------------------------- bounded on hostile input


def test_recursive_macro_is_bounded() -> None:
    message = fails("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}")
    assert "nests deeper than" in message


def test_output_limit() -> None:
    source = "{% for i in range(100000) %}xxxxxxxxxx{% endfor %}"
    with pytest.raises(TemplateProblem) as info:
        render(load(source), {}, RenderLimits(output_chars=50_000))
    assert info.value.limit == "output_chars"


def test_huge_range_and_repeat_are_refused() -> None:
    assert "limit" in fails("{{ range(10 ^ 12)|length }}")
    assert "limit" in fails("{{ 'x' * 1000000000 }}")


def test_large_context_renders_in_linear_time() -> None:

    source = "{% for m in messages %}{{ m.role }}: {{ m.content|trim }}\n{% endfor %}"
    template = load(source)

    def timed(count: int) -> float:
        messages = [{"role": "user", "content": " hi " * 5}] * count
        return cpu_seconds(lambda: render(template, {"messages": messages}, LIMITS))

    timed(200)
    small, large = timed(1000), timed(10000)
    assert large / small < 30  # ten times the input, far from a hundred times the time


# ---------------------------------------------------------------- nlohmann details


@pytest.mark.parametrize(
    ("source", "context", "expected"),
    [
        # Edge-LLM keeps key order in a hidden member that `in` and sorted views can see.
        ("{{ '__edgellm_internal_key_order__' in x }}", {"x": {"a": 1}}, "True"),
        (
            "{{ x|first }}|{{ x|join(',') }}",
            {"x": {"zeta": 1, "alpha": 2}},
            "['zeta', 'alpha']|['zeta', 'alpha'],2,1",
        ),
        # Signed 64-bit integers wrap; numbers print as nlohmann writes them.
        ("{{ x + 1 }}", {"x": 9223372036854775807}, "-9223372036854775808"),
        (
            "{{ 1e15 }}|{{ 1e16 }}|{{ 0.0001 }}|{{ 0.1 + 0.2 }}",
            {},
            "1e+15|1e+16|0.0001|0.30000000000000004",
        ),
        ("{% set x.y = 1 %}{% set z.0 = 2 %}{{ x }}|{{ z }}", {}, "{'y': 1}|[2]"),
    ],
)
def test_nlohmann_details(source: str, context: dict, expected: str) -> None:
    assert run(source, **context) == expected


@pytest.mark.parametrize(
    ("source", "context", "message"),
    [
        (
            "{{ x[true] }}",
            {"x": [1]},
            "[json.exception.type_error.302] type must be number, but is boolean",
        ),
        (
            "{{ true + 1 }}",
            {},
            "[json.exception.type_error.302] type must be number, but is boolean",
        ),
        (
            "{{ x|fromjson }}",
            {"x": "[1e400]"},
            "fromjson: [json.exception.out_of_range.406] number overflow parsing '1e400'",
        ),
    ],
)
def test_nlohmann_errors(source: str, context: dict, message: str) -> None:
    assert fails(source, **context) == message


def test_deeply_nested_context_fails_cleanly() -> None:
    deep: object = "x"
    for _ in range(5000):
        deep = [deep]
    for source in ("{{ x }}", "{{ x|tojson }}", "{% set y = x %}{{ y|length }}"):
        try:
            run(source, x=deep)
        except RenderError as error:
            assert "nests too deeply" in error.message


def test_hostile_strings_render_in_linear_time() -> None:

    template = load("{{ x|trim|length }}{{ x.split('{')|length }}{{ x|replace('{', '[')|length }}")

    def timed(count: int) -> float:
        return cpu_seconds(lambda: render(template, {"x": " {" * count}, LIMITS))

    timed(1000)
    small, large = timed(5_000), timed(50_000)
    assert large / small < 40
