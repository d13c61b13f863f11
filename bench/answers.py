"""Time every engine's reading of a 100 kB completion: p50 and p95 per engine and case.

    python -m bench.answers [--runs 30] [--kb 100]

The goal is p95 under 50 ms per engine (printed beside each figure, never asserted: these
machines are noisy). Each engine reads in this process, as its sandbox worker would, the
completion of a template it has a parser for; beside it, the time of a bare linear scan
of the same text (`str.count`), the floor any parser pays. Cases: a long plain answer,
reasoning then a long answer, a tool call with long arguments, and hostile text
(a tool-call opener repeated, an unclosed JSON object).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace

from app.answers.menu import EXAMPLE_TOOLS
from app.render.answer import AnswerRequest
from app.render.core import RenderRequest, read_with
from app.render.engines import ENGINES
from app.render.limits import DEFAULT_LIMITS
from tests.support import REPO
from tests.support.shared_data import TEMPLATES_DIR

TEMPLATE = "Qwen-Qwen3-0.6B.jinja"
#: What the playground knows of the model's name when Qwen3 comes from the library.
MODEL_NAMES = ("qwen3",)
#: transformers' own response template for Qwen3 (from its parse_response tests), so
#: that the transformers engine has something to parse with.
RESPONSE_TEMPLATES = REPO / "oracles" / "transformers" / "parse_response_cases.json"
GOAL_MS = 50.0


def cases(size: int) -> dict[str, str]:
    """The completions timed, each about `size` characters."""
    prose = ("The capital of France is Paris, on the Seine. " * (size // 46 + 1))[:size]
    arguments = '{"city": "' + "Paris " * (size // 6) + '"}'
    return {
        "plain answer": prose,
        "reasoning + answer": f"<think>\n{prose[: size // 2]}\n</think>\n\n{prose[: size // 2]}",
        "tool call": (
            f'<tool_call>\n{{"name": "get_weather", "arguments": {arguments}}}\n</tool_call>'
        ),
        "hostile openers": "<tool_call>{" * (size // 12),
        "unclosed object": '<tool_call>\n{"name": "get_weather", "arguments": {"a": ['
        + "[" * (size - 60),
        "function openers": "<function=get_weather>" * (size // 22),
        "python call lines": "".join(
            f'get_weather(city="Paris {i:05d}")\n' for i in range(size // 32)
        ),
    }


def timed(function, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return times


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--kb", type=int, default=100)
    args = parser.parse_args()
    template = (TEMPLATES_DIR / TEMPLATE).read_text(encoding="utf-8")
    templates = json.loads(RESPONSE_TEMPLATES.read_text("utf-8"))["templates"]
    response_template = json.dumps(templates["qwen3"])  # kept as JSON text, as a source does
    render = RenderRequest(
        template=template,
        messages=[{"role": "user", "content": "What is the weather in Paris?"}],
        tools=EXAMPLE_TOOLS,
        add_generation_prompt=True,
    )
    print(f"template {TEMPLATE}, completions of {args.kb} kB, {args.runs} runs each")
    worst: dict[str, float] = {}
    for name, completion in cases(args.kb * 1000).items():
        floor = statistics.median(timed(lambda c=completion: c.count("<"), args.runs))
        print(f"\n{name} ({len(completion):,} characters; a bare scan takes {floor:.2f} ms)")
        for engine in ENGINES.values():
            request = AnswerRequest(
                replace(render, engine=engine.info.id),
                completion,
                response_template=response_template,
                model_names=MODEL_NAMES,
            )
            reading = read_with(engine, request, DEFAULT_LIMITS)
            if reading.no_parser is not None:
                continue
            times = timed(lambda e=engine, r=request: read_with(e, r, DEFAULT_LIMITS), args.runs)
            high = p95(times)
            worst[engine.info.id] = max(worst.get(engine.info.id, 0.0), high)
            parser_name = reading.answer.parser if reading.answer else "-"
            verdict = "ok" if high < GOAL_MS else f"OVER the {GOAL_MS:g} ms goal"
            print(
                f"  {engine.info.id:<14} {parser_name:<22} p50 {statistics.median(times):7.2f} ms"
                f"  p95 {high:7.2f} ms  {verdict}"
            )
    print("\nworst p95 per engine: " + ", ".join(f"{e} {t:.1f} ms" for e, t in worst.items()))


if __name__ == "__main__":
    main()
