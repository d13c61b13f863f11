"""mistral.rs, a runtime the playground has no engine for: only its command line.

Its server (its `docs/CHAT_TOK.md`): `--jinja-explicit` names a Jinja file that replaces
the model's template (its older `--chat-template` wants a JSON file).
"""

from __future__ import annotations

from app.render.command_line import TEMPLATE_FILE, CommandContext, CommandLine, join


class MistralRs:
    """mistral.rs's server with the template file, ranked among the engines' lines."""

    command_rank = 30

    def command_lines(self, context: CommandContext) -> list[CommandLine]:
        words = ["mistralrs", "serve", "--jinja-explicit", TEMPLATE_FILE, "-m", context.hf_id]
        return [CommandLine("mistral.rs", "serve", join(words), {TEMPLATE_FILE: context.template})]
