"""Command lines that run a model with the template shown in the playground."""

from __future__ import annotations

import shlex


def llama_server_file_command(model: str, template_file: str) -> str:
    """`llama-server` overriding the model's template with a template file.

    `--jinja` makes llama.cpp render with its Jinja engine, as the playground does.
    """
    return shlex.join(
        ["llama-server", "-m", model, "--jinja", "--chat-template-file", template_file]
    )
