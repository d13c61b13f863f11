"""TGI's command line: its launcher takes no template file, but a whole
tokenizer_config.json (`--tokenizer-config-path`, TGI's launcher docs), read instead of
the model's, whose `chat_template` its router renders; the BOS and EOS texts the template
may print go in it too."""

from __future__ import annotations

import json

from app.render.command_line import CommandContext, CommandLine, CommandWriter, join

TOKENIZER_CONFIG_FILE = "tokenizer_config.json"


def command_lines(context: CommandContext) -> list[CommandLine]:
    config: dict[str, str] = {"chat_template": context.template}
    tokens = context.special_tokens
    config.update({k: v for k, v in tokens.items() if k in ("bos_token", "eos_token")})
    words = ["text-generation-launcher", "--model-id", context.hf_id]
    words += ["--tokenizer-config-path", TOKENIZER_CONFIG_FILE]
    text = json.dumps(config, ensure_ascii=False, indent=2) + "\n"
    return [CommandLine("tgi", "launcher", join(words), {TOKENIZER_CONFIG_FILE: text})]


WRITER = CommandWriter(rank=20, lines=command_lines)
