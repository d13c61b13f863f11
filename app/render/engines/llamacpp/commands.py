"""llama.cpp's command lines: llama-server and llama-cli with the template, a running
llama-server asked to render the conversation, and gguf-py writing the template into a
GGUF.

Facts they rest on (llama.cpp `common/arg.cpp`, `common/chat.cpp`,
`tools/server/README.md`; gguf-py `gguf/scripts/gguf_new_metadata.py`):

- llama.cpp's parser takes the argv word after `--chat-template` as its value, whatever
  it starts with (a template starting with "-" is fine) and does no escape processing
  on it. It knows no `--flag=value` form, so the value is always a separate word.
- `--chat-template` takes a Jinja template only with Jinja on; builds that check it while
  parsing ("unless --jinja is set before this flag") need `--jinja` first, so it always
  comes first here. Recent builds have Jinja on by default and check after parsing.
- Environment variables: LLAMA_ARG_MODEL, LLAMA_ARG_JINJA, LLAMA_ARG_CHAT_TEMPLATE,
  LLAMA_ARG_CHAT_TEMPLATE_FILE, and for the kwargs LLAMA_ARG_CHAT_TEMPLATE_KWARGS (newer
  builds) or LLAMA_CHAT_TEMPLATE_KWARGS (older builds); the env form sets both.
- `--reasoning-format` (environment variable LLAMA_ARG_THINK) is read by llama-server,
  llama-cli and llama-completion; `auto` is its default. A format chosen in the Response
  view goes on the lines that render with Jinja (with `--no-jinja` the answer is read as
  plain content, whatever the flag says).
- gguf-new-metadata reads a template file in Python's text mode, which turns CR and CRLF
  into LF; a GGUF should hold the exact text (llama.cpp renders it with its own engine),
  so a template with a CR goes inline.
"""

from __future__ import annotations

from typing import Any

from app.render.command_line import (
    TEMPLATE_FILE,
    CommandContext,
    CommandLine,
    CommandWriter,
    Render,
    assign,
    compact_json,
    fits_one_argument,
    join,
)
from app.render.engines.llamacpp.answers import REASONING_CHOICES
from app.render.engines.llamacpp.builtins import equivalent_builtin

#: The body `curl` sends when it is too long for one argument.
REQUEST_FILE = "apply-template.json"


def command_lines(context: CommandContext) -> list[CommandLine]:
    """llama-server's forms, the curl of a running one, llama-cli's forms, gguf-py."""
    builtin = context.facts.get("builtin")
    return [
        *_program_forms("llama-server", context, builtin),
        _curl(context),
        *_program_forms("llama-cli", context, builtin),
        _gguf_py(context.template, context.gguf),
    ]


def command_notes(facts: dict[str, Any]) -> dict[str, str]:
    """What the built-in form means, when a built-in writes what the template writes."""
    builtin = facts.get("builtin")
    if not builtin:
        return {}
    return {
        "builtin": f"On plain chats this template writes exactly what llama.cpp's built-in "
        f"`{builtin}` writes, so `--chat-template {builtin}` works too; built-in names know "
        "nothing of tools, tool calls or reasoning."
    }


def facts(template: str, special_tokens: dict[str, str], render: Render) -> dict[str, Any]:
    """The built-in format that writes what the template writes on plain chats."""
    return {"builtin": equivalent_builtin(render, special_tokens.get("bos_token"))}


def _program_forms(program: str, context: CommandContext, builtin: str | None) -> list[CommandLine]:
    template, model, kwargs_json = context.template, context.gguf, context.kwargs_json
    files = {TEMPLATE_FILE: template}
    reasoning = _reasoning_format(context)
    extra = ["--chat-template-kwargs", kwargs_json] if kwargs_json else []
    extra += ["--reasoning-format", reasoning] if reasoning else []
    # The file form first: it is the one to copy (a long template makes the inline form
    # unreadable, and some templates cannot be inline at all).
    words = [program, "-m", model, "--jinja", "--chat-template-file", TEMPLATE_FILE, *extra]
    entries = [CommandLine(program, "file", join(words), files)]
    if fits_one_argument(template):
        words = [program, "-m", model, "--jinja", "--chat-template", template, *extra]
        entries.append(CommandLine(program, "inline", join(words)))
    if builtin:
        # With Jinja on (the default of recent builds) the value of --chat-template is
        # compiled as Jinja source: only "chatml" is mapped to a real template, any other
        # name would render as its own literal text. --no-jinja sends the name to
        # llm_chat_apply_template, which knows it. (Builds from before Jinja became the
        # default have no --no-jinja; drop it there, their default is already off.)
        words = [program, "-m", model, "--no-jinja", "--chat-template", builtin]
        entries.append(CommandLine(program, "builtin", join(words)))
    assignments = [
        assign("LLAMA_ARG_MODEL", model),
        assign("LLAMA_ARG_JINJA", "1"),
        assign("LLAMA_ARG_CHAT_TEMPLATE_FILE", TEMPLATE_FILE),
    ]
    if kwargs_json:
        # Renamed from LLAMA_CHAT_TEMPLATE_KWARGS: setting both serves old and new builds.
        assignments.append(assign("LLAMA_ARG_CHAT_TEMPLATE_KWARGS", kwargs_json))
        assignments.append(assign("LLAMA_CHAT_TEMPLATE_KWARGS", kwargs_json))
    if reasoning:
        assignments.append(assign("LLAMA_ARG_THINK", reasoning))
    entries.append(CommandLine(program, "env", " ".join([*assignments, program]), files))
    return entries


def _reasoning_format(context: CommandContext) -> str | None:
    """The `--reasoning-format` chosen for llama.cpp's parser, when it is not the default
    (`auto`) and is one llama.cpp knows (anything else stays off the command line)."""
    chosen = context.parsers.get("llama.cpp", {}).get("reasoning_format")
    return chosen if chosen in REASONING_CHOICES and chosen != "auto" else None


def _curl(context: CommandContext) -> CommandLine:
    """A running llama-server rendering the conversation: POST /apply-template."""
    body: dict[str, Any] = {"messages": context.messages}
    if context.tools:
        body["tools"] = context.tools
    if context.kwargs:
        body["chat_template_kwargs"] = context.kwargs
    if not context.add_generation_prompt:
        body["add_generation_prompt"] = False  # the server's default is true
    data, files = compact_json(body), {}
    if not fits_one_argument(data):  # too big for one argument: curl reads it from a file
        data, files = "@" + REQUEST_FILE, {REQUEST_FILE: data}
    words = [
        "curl", "-sS", "-X", "POST", context.server_url.rstrip("/") + "/apply-template",
        "-H", "Content-Type: application/json", "--data-binary", data,
    ]  # fmt: skip
    return CommandLine("llama-server", "curl", join(words), files)


def _gguf_py(template: str, model: str) -> CommandLine:
    """Write the template into a copy of the GGUF (gguf-py's console script).

    `gguf-new-metadata` (the `gguf.scripts.gguf_new_metadata` module of `pip install gguf`)
    reads --chat-template-file in text mode, which would turn a CR into LF: a template
    with a CR goes inline as `--chat-template=VALUE` (the `=` keeps argparse from taking
    a leading "-" for an option), unless it starts with "[" (then the script parses it as
    a JSON list of named templates) or is too big for one argument.
    """
    output = (model[: -len(".gguf")] if model.endswith(".gguf") else model) + ".with-template.gguf"
    words = ["gguf-new-metadata", model, output]
    inline = "\r" in template and not template.startswith("[")
    if inline and fits_one_argument(template, len("--chat-template=")):
        return CommandLine(
            "gguf-py", "gguf_new_metadata", join([*words, "--chat-template=" + template])
        )
    command = join([*words, "--chat-template-file", TEMPLATE_FILE])
    return CommandLine("gguf-py", "gguf_new_metadata", command, {TEMPLATE_FILE: template})


WRITER = CommandWriter(rank=0, lines=command_lines, facts=facts, notes=command_notes)
