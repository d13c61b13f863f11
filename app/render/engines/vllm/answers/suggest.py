"""Which vLLM parser pair fits a chat template, read from the markup the template writes.

vLLM does not pick its parsers: the operator starts `vllm serve` with
`--tool-call-parser NAME` and `--reasoning-parser NAME`, most often as the model card
says. The playground suggests the pair from the template's own markers (the first rule
that matches wins), among the parsers it reproduces, and says why in a sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: (test on the template, parser, why): tool parsers, most specific first.
Rule = tuple[Callable[[str], bool], str, str]


def _has(*markers: str) -> Callable[[str], bool]:
    return lambda text: all(marker in text for marker in markers)


TOOL_RULES: tuple[Rule, ...] = (
    (_has("<|channel|>"), "openai", "it writes Harmony messages (`<|channel|>`)"),
    (
        _has("<|tool_calls_section_begin|>"),
        "kimi_k2",
        "it writes Kimi K2 tool-call sections (`<|tool_calls_section_begin|>`)",
    ),
    (
        _has("<|tool_call>call:"),
        "gemma4",
        "it writes Gemma 4 calls (`<|tool_call>call:NAME{...}<tool_call|>`)",
    ),
    (
        _has("<|open|>", "<|sep|>", "<|close|>"),
        "kimi_k3",
        "it writes Kimi K3's XTML channels (`<|open|>tools<|sep|>`)",
    ),
    (
        _has("DSML", "function_calls>"),
        "deepseek_v32",
        "it writes DeepSeek V3.2's DSML calls (`<｜DSML｜function_calls>`)",
    ),
    (
        _has("DSML", "tool_calls>"),
        "deepseek_v4",
        "it writes DeepSeek V4's DSML calls (`<｜DSML｜tool_calls>`)",
    ),
    (
        _has("DSML"),
        "none",
        "it writes DeepSeek DSML calls in a wrapper none of vLLM's DSML parsers here reads",
    ),
    (
        _has("tool▁calls▁begin", "```json"),
        "deepseek_v3",
        "it writes DeepSeek V3 calls (`<｜tool▁calls▁begin｜>` with a ```json block)",
    ),
    (
        _has("tool▁calls▁begin"),
        "deepseek_v31",
        "it writes DeepSeek V3.1 calls (`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS`)",
    ),
    (
        _has("<minimax:tool_call>"),
        "minimax_m2",
        "it writes MiniMax M2 calls (`<minimax:tool_call>`)",
    ),
    (_has("<arg_key>"), "glm45", "it writes GLM calls (`<arg_key>`/`<arg_value>`)"),
    (
        _has("<seed:tool_call>"),
        "none",
        "it writes Seed-OSS calls, which vLLM reads with `seed_oss`, a parser the playground "
        "does not reproduce",
    ),
    (
        _has("<function=", "<parameter="),
        "qwen3_coder",
        "it writes XML calls (`<function=NAME><parameter=KEY>`) as Qwen3-Coder does",
    ),
    (_has("<|tool_call|>"), "granite", "it writes Granite calls (`<|tool_call|>` and a JSON list)"),
    (
        _has("[TOOL_CALLS]", "[ARGS]"),
        "mistral",
        "it writes Mistral v11 calls (`[TOOL_CALLS]NAME[ARGS]`)",
    ),
    (
        _has("[TOOL_CALLS]"),
        "none",
        "it writes pre-v11 Mistral calls (`[TOOL_CALLS][{...}]`), which vLLM's `mistral` "
        "parser reads on its legacy path for tokenizers without `[ARGS]`, not reproduced here",
    ),
    (_has("<|python_start|>"), "llama4_pythonic", "it writes Llama 4 pythonic calls"),
    (
        _has("<tool_call>"),
        "hermes",
        "it writes JSON calls inside `<tool_call>` tags (Hermes style)",
    ),
    (
        lambda t: "<|python_tag|>" in t or ("ipython" in t and '"parameters"' in t),
        "llama3_json",
        'it writes Llama 3.1 JSON calls (`{"name": ..., "parameters": ...}`)',
    ),
    (_has("[func_name"), "pythonic", "it asks for pythonic calls (`[func(a=1)]`)"),
)

REASONING_RULES: tuple[Rule, ...] = (
    (_has("<|channel|>"), "openai_gptoss", "it writes Harmony's analysis channel"),
    (_has("<|channel>", "<channel|>"), "gemma4", "it writes Gemma 4's thought channel"),
    (
        _has("<|open|>", "<|sep|>", "<|close|>"),
        "kimi_k3",
        "it writes Kimi K3's XTML think channel",
    ),
    (
        _has("DSML", "function_calls>", "<think>"),
        "deepseek_v3",
        "it is DeepSeek V3.2's template, whose thinking switch vLLM's deepseek_v3 follows",
    ),
    (
        _has("DSML", "tool_calls>", "<think>"),
        "deepseek_v4",
        "it is DeepSeek V4's template, thinking by default, which vLLM's deepseek_v4 reads",
    ),
    (
        _has("tool▁calls▁begin", "set thinking", "<think>"),
        "deepseek_v3",
        "it is DeepSeek V3.1's template, whose thinking switch vLLM's deepseek_v3 follows",
    ),
    (_has("<arg_key>", "<think>"), "glm45", "it writes GLM's `<think>` blocks"),
    (
        _has("thought process", "<|start_of_role|>"),
        "granite",
        "it is a Granite template that asks for a thought process",
    ),
    (
        _has("<think>", "<|im_start|>"),
        "qwen3",
        "it writes `<think>` blocks in ChatML turns, as Qwen3 does",
    ),
    (_has("<think>"), "deepseek_r1", "it writes `<think>` blocks (DeepSeek R1 style)"),
    (
        _has("[THINK]"),
        "none",
        "it writes `[THINK]` blocks, which vLLM reads with `mistral`, a reasoning parser the "
        "playground does not reproduce",
    ),
)


@dataclass(frozen=True)
class Suggestion:
    """The parsers that fit a template, and why each."""

    tool: str
    reasoning: str
    tool_why: str
    reasoning_why: str


def _pick(rules: tuple[Rule, ...], template: str, known: set[str], flag: str) -> tuple[str, str]:
    """The first rule's parser that fits, and why, as a sentence (the page shows it after
    the flag and its value, so the sentence does not repeat them)."""
    for test, name, why in rules:
        if not test(template):
            continue
        if name != "none" and name not in known:
            return "none", _sentence(
                f"{why}, which vLLM reads with `{name}`, a parser the playground does not "
                "reproduce yet"
            )
        return name, _sentence(why)
    return "none", "The template writes no markup one of the parsers here reads."


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}."


def suggest(template: str, tools: set[str], reasonings: set[str]) -> Suggestion:
    """The pair for `template` among the registered tool and reasoning parser names."""
    tool, tool_why = _pick(TOOL_RULES, template, tools, "--tool-call-parser")
    reasoning, why = _pick(REASONING_RULES, template, reasonings, "--reasoning-parser")
    return Suggestion(tool, reasoning, tool_why, why)
