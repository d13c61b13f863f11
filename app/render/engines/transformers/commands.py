"""transformers' "command line": a Python snippet that loads the model's tokenizer, gives
it the template file and prints `apply_chat_template` of the conversation."""

from __future__ import annotations

import json
import math
import pprint
from typing import Any

from app.render.command_line import TEMPLATE_FILE, CommandContext, CommandLine, CommandWriter


def command_lines(context: CommandContext) -> list[CommandLine]:
    messages, tools, kwargs = context.messages, context.tools, context.kwargs
    plain = _finite([messages, tools, kwargs])
    source = "\n".join(
        [
            *([] if plain else ["import json", ""]),
            "from transformers import AutoTokenizer",
            "",
            f"tokenizer = AutoTokenizer.from_pretrained({context.hf_id!r})",
            # newline="" reads the file as it is (Jinja normalises line ends on its own).
            f'with open("{TEMPLATE_FILE}", encoding="utf-8", newline="") as file:',
            "    tokenizer.chat_template = file.read()",
            "",
            f"messages = {_python_literal(messages)}",
            f"tools = {_python_literal(tools) if tools else None}",
            f"kwargs = {_python_literal(kwargs)}",
            "",
            "prompt = tokenizer.apply_chat_template(",
            "    messages,",
            "    tools=tools,",
            f"    add_generation_prompt={context.add_generation_prompt},",
            "    tokenize=False,",
            "    **kwargs,",
            ")",
            "print(prompt)",
            "",
        ]
    )
    return [CommandLine("transformers", "python", source, {TEMPLATE_FILE: context.template})]


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _python_literal(value: Any) -> str:
    """Python source for a JSON value: a readable literal, or json.loads when it has NaN/inf."""
    if _finite(value):
        return pprint.pformat(value, width=88, sort_dicts=False)
    return f"json.loads({json.dumps(value)!r})"


WRITER = CommandWriter(rank=40, lines=command_lines)
