"""Edge-LLM's patched Inja 3.5.0 parser: what loads, what fails, and the message and place.

The expected messages and positions are read off the parser and lexer of the vendored Inja
in guswns531/TensorRT-Edge-LLM at 83f5f76871d71fbd2682c903eac285621d9077f7
(`3rdParty/inja/include/inja/inja.hpp`, configured as `cpp/chatTemplate/injaRenderer.cpp`
does), and, where F3's recorder has run, checked against the real parser's verdicts.
"""

from __future__ import annotations

import contextlib

import pytest

from app.render.engines.edge_llm.inja import nodes as n
from app.render.engines.edge_llm.inja.parser import LoadError, parse
from oracles.edge_llm import RECORDED, recorded
from tests.support.shared_data import needs_shared, template_files
from tests.support.timing import cpu_seconds

# ------------------------------------------------------------------ refused constructs

REFUSED = [
    # statements Inja does not have
    ("{% filter upper %}x{% endfilter %}", "(at 1:4) expected statement, got 'filter'"),
    ("{% do xs.append(1) %}", "(at 1:4) expected statement, got 'do'"),
    ("{% raw %}{{ x }}{% endraw %}", "(at 1:4) expected statement, got 'raw'"),
    ("{% call f() %}{% endcall %}", "(at 1:4) expected statement, got 'call'"),
    ("{% with a = 1 %}{% endwith %}", "(at 1:4) expected statement, got 'with'"),
    ("{% %}", "(at 1:4) expected statement, got '%}'"),
    # unknown functions are reported at the end of the template
    ("{{ x|indent(2) }}", "(at 1:18) unknown function indent"),
    ("{{ x|from_json }}\n", "(at 2:1) unknown function from_json"),
    ("{{ xs.append(1) }}", "(at 1:19) unknown function append"),
    ("{{ '{}'.format(x) }}", "(at 1:21) unknown function format"),
    ("{{ m[0].content.replace('a', 'b') }}", "(at 1:37) unknown function content.replace"),
    ("{{ x|join }}", "(at 1:13) unknown function join"),
    ("{{ x|title }}", "(at 1:14) unknown function title"),
    ("{{ range() }}", "(at 1:14) unknown function range"),
    ("{{ f() }}", "(at 1:10) unknown function f"),
    # block structure
    ("{% if x %}", "(at 1:11) unmatched if"),
    ("{% for x in xs %}", "(at 1:18) unmatched for"),
    ("{% macro m() %}", "(at 1:16) unmatched macro"),
    ("{% set x %}abc", "(at 1:15) unmatched set block"),
    ("{% generation %}", "(at 1:17) unmatched generation block"),
    ("{% endif %}", "(at 1:4) endif without matching if"),
    ("{% else %}", "(at 1:4) else/elif without matching if"),
    ("{% endfor %}", "(at 1:4) endfor without matching for"),
    ("{% endmacro %}", "(at 1:4) endmacro without matching macro"),
    ("{% endset %}", "(at 1:4) endset without matching set"),
    ("{% endblock %}", "(at 1:4) endblock without matching block"),
    ("{% endgeneration %}", "(at 1:4) endgeneration without matching generation"),
    ("{% break %}", "(at 1:4) loop control outside a for loop"),
    ("{% if y %}{% endif x %}", "(at 1:20) expected statement close, got 'x'"),
    # statement syntax
    ("{% for a, b, c in x %}{% endfor %}", "(at 1:12) expected 'in', got ','"),
    ("{% for x of y %}{% endfor %}", "(at 1:10) expected 'in', got 'of'"),
    ("{% for x in xs recursive %}{% endfor %}", "(at 1:26) malformed expression"),
    ("{% set a, b = 1, 2 %}", "(at 1:9) expected '=' or statement close, got ','"),
    ("{% if x = 1 %}{% endif %}", "(at 1:9) expected statement, got '='"),
    (
        "{% macro f(a=1, b) %}{% endmacro %}",
        "(at 1:18) non-default macro parameter follows default parameter",
    ),
    (
        "{% macro f() %}{% endmacro %}{% macro f() %}{% endmacro %}",
        "(at 1:39) macro with the name 'f' already exists",
    ),
    ("{% macro f %}{% endmacro %}", "(at 1:12) expected '(' after macro name"),
    ("{% include x %}", "(at 1:12) expected string, got 'x'"),
    # expressions
    ("{{ x }}{{ -1 }}", "(at 1:14) too few arguments"),
    ("{{ not not x }}", "(at 1:12) too few arguments"),  # at the token looked ahead
    ("{{ x y }}", "(at 1:8) malformed expression"),
    ("{{ x = 1 }}", "(at 1:6) expected expression close, got '='"),
    ("{{ x is divisibleby(3) }}", "(at 1:9) unknown test 'divisibleby'"),
    ("{{ x is }}", "(at 1:9) expected test name after 'is'"),
    ("{{ is none }}", "(at 1:7) missing value before 'is'"),
    ("{{ x[] }}", "(at 1:6) expected index and closing bracket"),
    ("{{ [1, 2 }}", "(at 1:10) expected ',' or ']' in array literal"),
    ('{{ "abc"[1:] }}', "(at 1:11) expected ',' or ']' in array literal"),
    ("{{ {'a' 1} }}", "(at 1:10) malformed expression"),
    ("{{ {'a'} }}", "(at 1:8) expected object key followed by ':'"),
    ("{{ () }}", "(at 1:5) empty expression in parentheses"),
    ("{{ (x }}", "(at 1:7) expected right parenthesis, got '}}'"),
    ("{{ f(x }}", "(at 1:8) expected right parenthesis, got '}}'"),
    ("{{ x|'a' }}", "(at 1:6) expected function name, got ''a''"),
    ("{{ (x). }}", "(at 1:9) expected member name after '.'"),
    ("{{ x if }}", "(at 1:9) conditional expression requires a condition"),
    ("{{ a if b else }}", "(at 1:16) conditional expression requires a false value"),
    ("{{ x", "(at 1:5) expected expression close, got '<eof>'"),
    ("{# note", "(at 1:3) expected comment close, got '<eof>'"),
]


@pytest.mark.parametrize(("source", "expected"), REFUSED, ids=[s for s, _ in REFUSED])
def test_a_construct_inja_refuses_fails_with_its_message(source: str, expected: str) -> None:
    with pytest.raises(LoadError) as caught:
        parse(source)
    assert str(caught.value) == "[inja.exception.parser_error] " + expected
    line, column = expected[4:].split(")")[0].split(":")
    assert (caught.value.line, caught.value.column) == (int(line), int(column))


_JSON = (
    "[json.exception.parse_error.101] parse error at line {}: syntax error while parsing value - "
)
LITERAL_ERRORS = [
    ("{{ -x }}", "1, column 2", "invalid number; expected digit after '-'; last read: '-'"),
    ("{{ 1. }}", "1, column 3", "invalid number; expected digit after '.'; last read: '1.'"),
    ("{{ 01 }}", "1, column 2", "unexpected number literal; expected end of input"),
    ("{{ 1.2.3 }}", "1, column 4", "invalid literal; last read: '1.2.'; expected end of input"),
    (
        "{{ '\\uZZZZ' }}",
        "1, column 4",
        "invalid string: '\\u' must be followed by 4 hex digits; last read: '\"\\uZ'",
    ),
    (
        "{{ '\\uDE00' }}",
        "1, column 7",
        "invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF; "
        "last read: '\"\\uDE00'",
    ),
    (
        "{{ '\\\x01' }}",
        "1, column 4",
        "invalid string: control character U+0001 (SOH) must be escaped to \\u0001; "
        "last read: '\"\\\\<U+0001>'",
    ),
]


@pytest.mark.parametrize(("source", "where", "why"), LITERAL_ERRORS)
def test_a_bad_literal_fails_with_nlohmann_s_message(source: str, where: str, why: str) -> None:
    # Inja hands literals to nlohmann's JSON parser, whose exception is not Inja's.
    with pytest.raises(LoadError) as caught:
        parse(source)
    assert (caught.value.kind, str(caught.value)) == ("json", _JSON.format(where) + why)


def test_an_unterminated_string_and_a_crash_are_their_own_kinds() -> None:
    with pytest.raises(LoadError) as caught:
        parse("{{ 'abc }}")
    assert (str(caught.value), caught.value.kind) == ("unterminated string literal", "runtime")
    with pytest.raises(LoadError) as caught:
        parse("{{ |upper }}")
    assert caught.value.kind == "crash"


def test_a_non_ascii_character_is_reported_as_the_byte_inja_sees() -> None:
    with pytest.raises(LoadError) as caught:
        parse("{{ café }}")
    assert str(caught.value).endswith("(at 1:7) expected expression close, got '\ufffd'")


def test_columns_count_utf8_bytes_as_inja_does() -> None:
    with pytest.raises(LoadError) as caught:
        parse("é\n｜{{ x y }}")
    assert (caught.value.line, caught.value.column) == (2, 11)


# ------------------------------------------------------------------ accepted constructs

ACCEPTED = [
    "{% if a %}1{% elif b %}2{% else if c %}3{% else %}4{% endif %}",
    "{% if x %}{% else %}{% else %}{% endif %}",
    "{% for k, v in d|items %}{{ k }}={{ v }}{% endfor %}",
    "{% for m in messages if m.role != 'system' %}{{ loop.index0 }}{% endfor %}",
    "{% for x in xs %}{% if x %}{% break %}{% else %}{% continue %}{% endif %}{% endfor %}",
    "{% set ns = namespace(found=false, n=0) %}{% set ns.found = true %}",
    "{% set body %}text {{ x }}{% endset %}{{ body }}",
    "{% macro m(a, b='x') %}{{ a ~ b }}{% endmacro %}{{ m(1) }}{{ m(1, b=2) }}",
    "{{ later(1) }}{% macro later(a) %}{% endmacro %}",
    "{% generation %}{{ x }}{% endgeneration %}",
    "{% include 'other.jinja' %}{% block b %}{% endblock %}",
    "{{ [1, 'a', [2], {'k': none}] }}{{ {'a': 1, 'b': [True, False, None],} }}",
    "{{ (1, 2) }}{{ (1,) }}{{ x[1:] }}{{ x[:-1] }}{{ x[::-1] }}{{ x[a:b:c] }}",
    "{{ messages[-1].content }}{{ x.items()[0] }}{{ x['a']['b'] }}{{ x. }}",
    "{{ x is defined and x is not none or y is string }}",
    "{{ 'a' if x else 'b' }}{{ 'a' if x }}",
    "{{ -1 }}{{ a in b }}{{ a not in b }}{{ not a }}{{ a - 1 }}{{ 2 ^ 3 ^ 2 }}",
    "{{ x|tojson }}{{ x|tojson(indent=2) }}{{ x|selectattr('a', 'equalto', 1)|list }}",
    "{{ x.strip().split('\\n') }}{{ message.content.startswith('a') }}",
    "{{ raise_exception('no') }}{{ strftime_now('%Y') }}{{ range(3) }}{{ range(1, 3) }}",
    "{{ 'a' 'b' }}{{ x|length > 0 }}{{ x|default('d') }}{{ x|map('upper')|join(', ') }}",
]


@pytest.mark.parametrize("source", ACCEPTED)
def test_a_construct_of_the_dialect_loads(source: str) -> None:
    assert isinstance(parse(source), n.Template)


def _only_expr(source: str) -> n.Expr:
    (node,) = parse(source).body
    assert isinstance(node, n.Output)
    assert node.expr is not None
    return node.expr


def test_dotted_names_are_one_variable_and_calls_take_the_receiver_first() -> None:
    assert _only_expr("{{ message.content }}") == n.Var(3, "message.content")
    call = _only_expr("{{ message.content.strip('x') }}")
    assert isinstance(call, n.Call)
    assert (call.name, call.kind, call.args[0]) == (
        "strip",
        "callback",
        n.Var(3, "message.content"),
    )
    member = _only_expr("{{ m[0].a.b }}")
    assert isinstance(member, n.Item) and member.key == n.Literal(8, "a.b")


def test_precedence_is_inja_s() -> None:
    # `not` binds tighter than `==` in Inja.
    expr = _only_expr("{{ not a == b }}")
    assert isinstance(expr, n.Op) and expr.op == "=="
    assert isinstance(expr.args[0], n.Op) and expr.args[0].op == "not"
    expr = _only_expr("{{ a + b * c }}")
    assert isinstance(expr, n.Op) and expr.op == "+" and expr.args[1].op == "*"
    power = _only_expr("{{ 2 ^ 3 ^ 2 }}")  # right-associative
    assert isinstance(power, n.Op) and isinstance(power.args[1], n.Op)
    filtered = _only_expr("{{ a ~ b|upper }}")  # the filter takes the last operand only
    assert isinstance(filtered, n.Op) and isinstance(filtered.args[1], n.Call)


def test_calls_are_resolved_at_load() -> None:
    expr = _only_expr("{{ x|length }}")
    assert isinstance(expr, n.Call) and expr.kind == "builtin"
    expr = _only_expr("{{ range(1, 3) }}")
    assert isinstance(expr, n.Call) and expr.kind == "callback"
    ns = _only_expr("{{ namespace(a=1) }}")
    assert isinstance(ns, n.Call) and ns.args[0] == n.Literal(13, "a") and len(ns.args) == 2
    tmpl = parse("{% macro m() %}{% endmacro %}{{ m() }}")
    assert tmpl.body[1].expr.kind == "macro" and "m" in tmpl.macros


def test_string_literals_decode_as_inja_normalises_them() -> None:
    assert _only_expr("{{ 'it\\'s' }}") == n.Literal(3, "it's")
    assert _only_expr('{{ "a\\\'b" }}') == n.Literal(3, "a\\'b")
    assert _only_expr("{{ '\\n\\t\\u00e9\\s' }}") == n.Literal(3, "\n\té\\s")
    assert _only_expr("{{ 1e3 }}") == n.Literal(3, 1000.0)
    assert _only_expr("{{ True }}") == n.Literal(3, True)


def _texts(source: str) -> list[str]:
    out: list[str] = []
    todo = list(parse(source).body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, n.Text):
            out.append(node.text)
        for attr in ("body", "orelse"):
            todo[0:0] = getattr(node, attr, [])
    return out


def test_whitespace_follows_trim_and_lstrip_blocks() -> None:
    assert _texts("a  \n  {% if x %}\nb{% endif %}") == ["a  \n", "b"]
    assert _texts("{{ x }}  {% if y %}{% endif %}") == []  # blanks after a tag stripped too
    assert _texts("a\n{#- c -#}\n\nb") == ["a", "\nb"]  # `-#}` drops one newline only
    assert _texts("a {{- x -}} b") == ["a", "b"]
    assert _texts("a {{ x }}\nb") == ["a ", "\nb"]  # trim_blocks is not for {{ }}
    assert _texts("a\n  {%+ if x %}{% endif %}") == ["a\n  "]
    assert _texts("\ufeffa") == ["a"]


# ------------------------------------------------------------------ the shared templates

#: Load verdicts of the 68 shared templates (None = loads), as read from the source.
FAILING = {
    "CohereForAI-c4ai-command-r-plus-tool_use.jinja": "(at 203:1) unknown function indent",
    "Kimi-K2-Instruct.jinja": "(at 61:1) unknown function append",
    "Kimi-K2-Thinking.jinja": "(at 109:1) unknown function append",
    "deepseek-ai-DeepSeek-V3.2.jinja": "(at 142:1) unknown function from_json",
    "deepseek-ai-DeepSeek-V4-Flash-0731.jinja": "(at 141:1) unknown function from_json",
    "deepseek-ai-DeepSeek-V4.jinja": "(at 138:1) unknown function from_json",
    "fireworks-ai-llama-3-firefunction-v2.jinja": "(at 4:5) expected statement, got 'filter'",
    "openbmb-MiniCPM5-1B.jinja": "(at 180:1) unknown function content.replace",
    "tencent-Hy3.jinja": "(at 222:13) unknown function format",
}


def _verdict(path) -> str | None:
    try:
        parse(path.read_text(encoding="utf-8"))
    except LoadError as error:
        return str(error)
    return None


@needs_shared
@pytest.mark.parametrize("path", template_files(), ids=lambda p: p.name)
def test_each_shared_template_loads_or_fails_as_the_source_says(path) -> None:
    expected = FAILING.get(path.name)
    assert _verdict(path) == (expected and "[inja.exception.parser_error] " + expected)


@needs_shared
def test_nine_of_the_sixty_eight_do_not_load() -> None:
    files = template_files()
    assert len(files) == 68
    assert sum(_verdict(p) is not None for p in files) == len(FAILING) == 9


@needs_shared
def test_load_verdicts_agree_with_the_recorded_oracle() -> None:
    if not RECORDED.is_file():
        pytest.skip("no recorded Edge-LLM fixture (oracles/edge_llm/recorded.json)")
    by_stem = {p.stem: p for p in template_files()}
    checked = 0
    for stem, entry in recorded()["templates"].items():
        load = entry["load"]
        assert _verdict(by_stem[stem]) == (None if load["ok"] else load["error"]), stem
        checked += 1
    assert checked == len(by_stem) == 68


# ------------------------------------------------------------------ hostile input


def _best_time(fn, text: str) -> float:
    return cpu_seconds(lambda: fn(text))


def _parse_quietly(text: str) -> None:
    with contextlib.suppress(LoadError):
        parse(text)


def _linear_scan(text: str) -> None:
    count = 0
    for ch in text:
        if ch == "{":
            count += 1


HOSTILE = {
    "opens": "{{" * 50_000,
    "statements": "{% if x %}" * 10_000,
    "parens": "{{ " + "(" * 50_000,
    "brackets": "{{ " + "[" * 50_000,
    "braces": "{" * 100_000,
    "unterminated": "{{ '" + "a" * 100_000,
    "comments": "{#" * 50_000,
    "dots": "{{ " + "x." * 50_000 + " }}",
    "operators": "{{ " + "1 + " * 25_000 + "1 }}",
    "nested_ifs": "{% if x %}" * 5_000 + "{% endif %}" * 5_000,
    "filters": "{{ x" + "|upper" * 15_000 + " }}",
    "unknown_calls": "{{ f() }}" * 10_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_is_parsed_in_linear_time(name: str) -> None:
    text = HOSTILE[name]
    small = text[: len(text) // 4]
    t_big = _best_time(_parse_quietly, text)
    t_small = _best_time(_parse_quietly, small)
    t_scan = _best_time(_linear_scan, text)
    # Quadratic work would make the 4x longer input ~16x slower; allow noise up to 10x.
    assert t_big < 10 * t_small + 20 * t_scan
    assert t_big < 400 * t_scan
