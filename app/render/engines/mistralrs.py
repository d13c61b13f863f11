"""mistral.rs, a runtime the playground has no engine for: only its command line.

Its server (its `docs/CHAT_TOK.md`): `--jinja-explicit` names a Jinja file that replaces
the model's template (its older `--chat-template` wants a JSON file).
"""

from __future__ import annotations

from app.render.command_line import (
    TEMPLATE_FILE,
    CommandContext,
    CommandLine,
    CommandWriter,
    join,
)


def command_lines(context: CommandContext) -> list[CommandLine]:
    """mistral.rs's server with the template file."""
    words = ["mistralrs", "serve", "--jinja-explicit", TEMPLATE_FILE, "-m", context.hf_id]
    return [CommandLine("mistral.rs", "serve", join(words), {TEMPLATE_FILE: context.template})]


#: Ranked among the engines' lines.
WRITER = CommandWriter(rank=30, lines=command_lines)
