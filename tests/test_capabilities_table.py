"""Expected `chat_template_caps` of well-known templates, worked out by reading their Jinja.

Each row was derived by hand from the template source, following the definitions that
`app.render.engines.llamacpp.capabilities` takes from llama.cpp's `common/jinja/caps.cpp`:

- string content: a user message whose content is a plain string renders (and, if the
  template also reads the content as a list, the string still reaches the output);
- typed content: rendering that plain-string content reads it as a list (loops over it,
  indexes it or applies `selectattr`); or (since b11434) the template tests
  `content is string`, and content given as an empty list renders and is read as a list
  (the other branch's loop);
- system role: the content of a leading system message is read at all;
- tools: the declared tool's `function.name` is read (`tojson` reads everything);
- tool calls: the `tool_calls` list of an assistant turn is read;
- object arguments: arguments given as an object reach the template down to their
  values (`arguments | tojson`, or a loop over `arguments.items()`);
- parallel tool calls: with two calls in one turn the second one is read (and the
  render does not raise);
- preserve reasoning: `reasoning_content` of an assistant turn two user turns back
  reaches the output (with enable_thinking/preserve_thinking set to keep it);
- reasoning effort: the template reads `reasoning_effort` (or `reasoning_strength`).

Nothing here was copied from the detector's output: a failing row is a disagreement to
investigate, not a row to update.
"""

from __future__ import annotations

import pytest

from app.render.engines.llamacpp.capabilities import CAPABILITIES, detect_capabilities
from tests.support.shared_data import TEMPLATES_DIR, require_shared

require_shared()


def caps(
    *,
    system: bool,
    string: bool,
    typed: bool,
    tools: bool,
    calls: bool,
    objargs: bool,
    parallel: bool,
    reasoning: bool,
    effort: bool,
) -> dict[str, bool]:
    """One table row, in llama-server's key names."""
    return {
        "supports_system_role": system,
        "supports_string_content": string,
        "supports_typed_content": typed,
        "supports_tools": tools,
        "supports_tool_calls": calls,
        "supports_object_arguments": objargs,
        "supports_parallel_tool_calls": parallel,
        "supports_preserve_reasoning": reasoning,
        "supports_reasoning_effort": effort,
    }


# The three Llama 3.x templates share their logic (3.3 is byte-identical to 3.1).
LLAMA_3 = caps(
    system=True,  # system: content|trim becomes system_message, printed in the system header
    string=True,  # string: '<|start_header_id|>' + role + ... + content|trim
    typed=False,  # typed: content is only trimmed and concatenated, never iterated
    tools=True,  # tools: each tool printed with `t | tojson(indent=4)`
    calls=True,  # calls: message.tool_calls|length and message.tool_calls[0].function
    objargs=True,  # object args: tool_call.arguments | tojson
    parallel=False,  # parallel: raises "This model only supports single tool-calls at once!"
    reasoning=False,  # reasoning: reasoning_content never referenced
    effort=False,  # effort: reasoning_effort never referenced
)

EXPECTED: dict[str, dict[str, bool]] = {
    "Qwen-Qwen2.5-7B-Instruct.jinja": caps(
        system=True,  # system: messages[0]['content'] after <|im_start|>system
        string=True,  # string: '<|im_start|>' + role + '\n' + message.content
        typed=False,  # typed: content only concatenated, never iterated
        tools=True,  # tools: `tool | tojson` inside <tools></tools>
        calls=True,  # calls: `for tool_call in message.tool_calls`
        objargs=True,  # object args: tool_call.arguments | tojson
        parallel=True,  # parallel: every call of the turn rendered as its own <tool_call>
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reasoning_effort never referenced
    ),
    "Qwen-Qwen3-0.6B.jinja": caps(
        system=True,  # system: rendered as <|im_start|>system + messages[0].content
        string=True,  # string: '<|im_start|>' + role + '\n' + message.content
        typed=False,  # typed: content only used via startswith/endswith and concatenation
        tools=True,  # tools: `tool | tojson` inside <tools></tools>
        calls=True,  # calls: `for tool_call in message.tool_calls`
        objargs=True,  # object args: not a string -> tool_call.arguments | tojson
        parallel=True,  # parallel: loop renders every call, '\n' between them
        reasoning=False,  # reasoning: <think> only after last_query_index (the last user turn)
        effort=False,  # effort: reads enable_thinking only, never reasoning_effort
    ),
    "Qwen-QwQ-32B.jinja": caps(
        system=True,  # system: rendered as <|im_start|>system + messages[0]['content']
        string=True,  # string: '<|im_start|>' + role + '\n' + message.content
        typed=False,  # typed: content only split on </think> and concatenated
        tools=True,  # tools: `tool | tojson` inside <tools></tools>
        calls=True,  # calls: `for tool_call in message.tool_calls`
        objargs=True,  # object args: tool_call.arguments | tojson
        parallel=True,  # parallel: loop renders every call
        reasoning=False,  # reasoning: reasoning_content never referenced (and </think> cut)
        effort=False,  # effort: reads enable_thinking only
    ),
    "meta-llama-Llama-3.1-8B-Instruct.jinja": LLAMA_3,
    "meta-llama-Llama-3.2-3B-Instruct.jinja": LLAMA_3,
    "meta-llama-Llama-3.3-70B-Instruct.jinja": LLAMA_3,
    "mistralai-Mistral-Nemo-Instruct-2407.jinja": caps(
        system=True,  # system: system_message prepended to the last [INST]
        string=True,  # string: "[INST]" + message["content"] + "[/INST]"
        typed=False,  # typed: content only concatenated (selectattr is on messages, not content)
        tools=True,  # tools: each tool.function key/value printed, "name" included
        calls=True,  # calls: `for tool_call in message.tool_calls` under [TOOL_CALLS]
        objargs=True,  # object args: tool_call.function|tojson serialises the arguments
        parallel=True,  # parallel: every call rendered (ids call00001/call00002 have length 9)
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reasoning_effort never referenced
    ),
    "Mistral-Small-3.2-24B-Instruct-2506.jinja": caps(
        system=True,  # system: string content becomes system_prompt in [SYSTEM_PROMPT]
        string=True,  # string: `content is string` -> printed inside [INST]
        typed=True,  # typed: `is string` test, and an empty list reaches the block loop
        tools=True,  # tools: [AVAILABLE_TOOLS] + tools|tojson
        calls=True,  # calls: message.get('tool_calls') looped, [TOOL_CALLS] + name
        objargs=True,  # object args: tool_call['function']['arguments']|tojson after [ARGS]
        parallel=True,  # parallel: loop renders every call (ids have length 9)
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reasoning_effort never referenced
    ),
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja": caps(
        system=True,  # system: ns.system_prompt = content, printed after bos_token
        string=True,  # string: '<｜User｜>' + message['content']
        typed=False,  # typed: content only concatenated / split on </think>
        tools=False,  # tools: the `tools` variable is never referenced
        calls=True,  # calls: `for tool in message['tool_calls']`
        objargs=True,  # object args: `... + tool['function']['arguments'] | tojson` (filter first)
        parallel=True,  # parallel: later calls rendered in the else branch
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reads enable_thinking only
    ),
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja": caps(
        system=True,  # system: ns.system_prompt = content, printed after bos_token
        string=True,  # string: '<｜User｜>' + message['content']
        typed=False,  # typed: content only concatenated / split on </think>
        tools=False,  # tools: the `tools` variable is never referenced
        calls=False,  # calls: only rendered when content is none; "" content skips the branch
        objargs=False,  # object args: tool_calls never read in the probe
        parallel=False,  # parallel: tool_calls never read
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reasoning_effort never referenced
    ),
    "deepseek-ai-DeepSeek-V3.1.jinja": caps(
        system=True,  # system: system contents joined into ns.system_prompt after bos_token
        string=True,  # string: '<｜User｜>' + message['content']
        typed=False,  # typed: content only concatenated / split on </think>
        tools=False,  # tools: the `tools` variable is never referenced
        calls=True,  # calls: `for tool in message['tool_calls']`
        objargs=True,  # object args: tool['function']['arguments'] | tojson
        parallel=True,  # parallel: later calls rendered in the else branch
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reads thinking/enable_thinking only
    ),
    "openai-gpt-oss-120b.jinja": caps(
        system=True,  # system: becomes developer_message under "# Instructions"
        string=True,  # string: "<|start|>user<|message|>" + message.content
        typed=False,  # typed: content only concatenated / tested with `in`
        tools=True,  # tools: render_tool_namespace prints "type " + tool.name
        calls=True,  # calls: message.tool_calls[0]
        objargs=True,  # object args: tool_call.arguments|tojson
        parallel=False,  # parallel: only message.tool_calls[0] is read ("max 1 tool call")
        reasoning=False,  # reasoning: reads `thinking`, never reasoning_content
        effort=True,  # effort: "Reasoning: " + reasoning_effort in the system message
    ),
    "google-gemma-2-2b-it.jinja": caps(
        system=False,  # system: raises 'System role not supported' before reading content
        string=True,  # string: '<start_of_turn>' + role + '\n' + content | trim
        typed=False,  # typed: content only trimmed and concatenated
        tools=False,  # tools: never referenced (and the tool turn breaks the alternation)
        calls=False,  # calls: tool_calls never referenced; the tool probe raises anyway
        objargs=False,  # object args: tool_calls never referenced
        parallel=False,  # parallel: the tool probe raises on role alternation
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reasoning_effort never referenced
    ),
    "microsoft-Phi-3.5-mini-instruct.jinja": caps(
        system=True,  # system: '<|system|>\n' + message['content']
        string=True,  # string: '<|user|>\n' + message['content']
        typed=False,  # typed: content only concatenated
        tools=False,  # tools: never referenced
        calls=False,  # calls: tool_calls never referenced
        objargs=False,  # object args: tool_calls never referenced
        parallel=False,  # parallel: the second call is never read
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reasoning_effort never referenced
    ),
    "ibm-granite-granite-3.3-2B-Instruct.jinja": caps(
        system=True,  # system: system_message from messages[0]['content'] after system role
        string=True,  # string: '<|start_of_role|>' + role + '<|end_of_role|>' + content
        typed=False,  # typed: content only concatenated
        tools=True,  # tools: available_tools (= tools) | tojson(indent=4)
        calls=False,  # calls: every message prints only role and content, never tool_calls
        objargs=False,  # object args: tool_calls never read
        parallel=False,  # parallel: tool_calls never read
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reads `thinking`, never reasoning_effort
    ),
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": caps(
        system=True,  # system: rendered as <|im_start|>system + message.content
        string=True,  # string: '<|im_start|>' + role + '\n' + message.content
        typed=False,  # typed: content only concatenated
        tools=True,  # tools: '{"name": "' + tool.name + '", '
        calls=True,  # calls: `message.tool_calls is not defined` test, then looped
        objargs=True,  # object args: not a string -> tool_call.arguments|tojson
        parallel=True,  # parallel: loop renders every call in its own <tool_call>
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reasoning_effort never referenced
    ),
    "moonshotai-Kimi-K2.jinja": caps(
        system=True,  # system: `content is string` -> printed after <|im_system|>system
        string=True,  # string: `content is string` -> printed
        typed=True,  # typed: `is string` test, and the parts loop reads an empty list
        tools=True,  # tools: tool_declare + tools | tojson
        calls=True,  # calls: `for tool_call in message['tool_calls']`
        objargs=True,  # object args: tool_call['function']['arguments'] | tojson
        parallel=True,  # parallel: each call rendered as functions.<name>:<index>
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reasoning_effort never referenced
    ),
    "Kimi-K2-Thinking.jinja": caps(
        system=True,  # system: render_content(message) of the system turn
        string=True,  # string: render_content prints `c` when it is a string
        typed=True,  # typed: `is string` test, and the parts loop reads an empty list
        tools=True,  # tools: tool_declare + tools | tojson
        calls=True,  # calls: render_toolcalls loops message['tool_calls']
        objargs=True,  # object args: not a string -> arguments | tojson
        parallel=True,  # parallel: render_toolcalls renders every call
        # preserve reasoning: the backwards scan for the "last" plain assistant turn keeps
        # overwriting, so it stops at the first one; that turn is in hist_msgs, rendered
        # as <think></think> without its reasoning_content.
        reasoning=False,
        effort=False,  # effort: reasoning_effort never referenced
    ),
    "GLM-4.6.jinja": caps(
        system=True,  # system: <|system|> + visible_text(m.content)
        string=True,  # string: visible_text prints a string content as is
        typed=True,  # typed: `is string` test, and visible_text loops over an empty list
        tools=True,  # tools: tool | tojson(ensure_ascii=False)
        calls=True,  # calls: `for tc in m.tool_calls`
        objargs=True,  # object args: loops _args.items(), prints each value in <arg_value>
        parallel=True,  # parallel: every call rendered as its own <tool_call>
        reasoning=False,  # reasoning: <think>reasoning</think> only after last_user_index
        effort=False,  # effort: reads enable_thinking only
    ),
    "HuggingFaceTB-SmolLM3-3B.jinja": caps(
        system=True,  # system: system_message scanned for /think, printed as custom instructions
        string=True,  # string: `content is string` -> printed
        typed=False,  # typed: non-string content is replaced by "", never iterated
        tools=False,  # tools: never referenced (this Unsloth edit has no tool section)
        calls=False,  # calls: tool_calls never referenced
        objargs=False,  # object args: tool_calls never referenced
        parallel=False,  # parallel: the second call is never read
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reads enable_thinking only
    ),
    "Qwen3-Coder.jinja": caps(
        system=True,  # system: "<|im_start|>system\n" + system_message
        string=True,  # string: '<|im_start|>' + role + '\n' + message.content
        typed=False,  # typed: content only tested, trimmed and concatenated
        tools=True,  # tools: "<name>" ~ tool.name ~ "</name>"
        calls=True,  # calls: message.tool_calls tested (iterable, length) and looped
        objargs=True,  # object args: `tool_call.arguments|items`, each value printed
        parallel=True,  # parallel: loop renders every call
        reasoning=False,  # reasoning: reasoning_content never referenced
        effort=False,  # effort: reasoning_effort never referenced
    ),
}


def test_table_rows_are_complete() -> None:
    assert len(EXPECTED) >= 15
    for name, row in EXPECTED.items():
        assert set(row) == set(CAPABILITIES), name
        assert (TEMPLATES_DIR / name).is_file(), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_detected_capabilities_match_reading(name: str) -> None:
    template = (TEMPLATES_DIR / name).read_text(encoding="utf-8")
    assert detect_capabilities(template) == EXPECTED[name]
