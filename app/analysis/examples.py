"""The built-in example conversations: the page's Examples menu and the portability report.

Each is picked to exercise one part of a chat template (a system prompt and several turns,
parallel tool calls and their results, reasoning in earlier turns, a continued final
message). The page embeds them as JSON for its menu (static/examples.js), and the
portability report (`portability.py`) renders the template over them with every engine,
so both always use the same list.
"""

from __future__ import annotations

import json
from typing import Any


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call as an OpenAI client sends it: its arguments are JSON text. Its id has
    nine letters and digits, the only ids Mistral's templates accept."""
    text = json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


_CITY = {"type": "string", "description": "The city, e.g. Lisbon"}

#: Every example: `name`, `title`, `messages`, and optionally `tools`,
#: `add_generation_prompt` (default true) and `continue_final_message` (default false).
EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "name": "plain",
        "title": "Plain: one question",
        "messages": [
            {"role": "user", "content": "What is the boiling point of water at sea level?"}
        ],
    },
    {
        "name": "multi-turn",
        "title": "System prompt and several turns",
        "messages": [
            {"role": "system", "content": "You are a concise assistant for a hardware store."},
            {"role": "user", "content": "Do you sell cordless drills?"},
            {
                "role": "assistant",
                "content": "Yes: we carry 12 V and 18 V models from three brands.",
            },
            {"role": "user", "content": "Which one is lighter?"},
            {"role": "assistant", "content": "The 12 V model, about 1.1 kg with its battery."},
            {"role": "user", "content": "Does its battery fit your 18 V saw?"},
        ],
    },
    {
        "name": "parallel-tools",
        "title": "Tools: two calls at once, and their results",
        "tools": [
            _tool(
                "get_weather",
                "The current weather in a city.",
                {"city": _CITY, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                ["city"],
            ),
            _tool("get_local_time", "The local time in a city.", {"city": _CITY}, ["city"]),
        ],
        "messages": [
            {"role": "user", "content": "What's the weather and the local time in Lisbon?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    _call("call00001", "get_weather", {"city": "Lisbon", "unit": "celsius"}),
                    _call("call00002", "get_local_time", {"city": "Lisbon"}),
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call00001",
                "content": '{"temperature": 21, "sky": "clear"}',
            },
            {"role": "tool", "tool_call_id": "call00002", "content": '{"time": "14:05"}'},
            {"role": "assistant", "content": "It is 21 °C and clear in Lisbon, and 14:05 there."},
            {"role": "user", "content": "And in Oslo?"},
        ],
    },
    {
        "name": "reasoning",
        "title": "Reasoning in earlier turns",
        "messages": [
            {"role": "user", "content": "Is 221 a prime number?"},
            {
                "role": "assistant",
                "reasoning_content": "221 = 13 × 17, so it has divisors other than 1 and itself.",
                "content": "No: 221 = 13 × 17.",
            },
            {"role": "user", "content": "And 223?"},
            {
                "role": "assistant",
                "reasoning_content": "√223 < 15, and 223 is not divisible by 2, 3, 5, 7, 11 or 13.",
                "content": "Yes, 223 is prime.",
            },
            {"role": "user", "content": "What about 227?"},
        ],
    },
    {
        "name": "continue",
        "title": "Continue the final message (prefill)",
        "add_generation_prompt": False,
        "continue_final_message": True,
        "messages": [
            {"role": "user", "content": "Write a haiku about autumn rain."},
            {"role": "assistant", "content": "Cold rain on the roof,"},
        ],
    },
)
