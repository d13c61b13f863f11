"""The llama.cpp engine: what llama-server's `/apply-template` returns, and how it reads
a completion. Folders follow llama.cpp's own units (common/, build b11434):

`engine.py` is the engine and `render.py` its render:

- `apply/`: chat.cpp's `common_chat_templates_apply`, ported once: the prompt `render.py`
  returns and the chat params `answers/` parses with;
- `families/`: parsers/*.cpp, one record per model family (detection, prompt hooks,
  thinking default, params), with `hooks.py` the prompt hooks;
- `autoparser/`: chat-diff-analyzer.cpp and chat-auto-parser-generator.cpp;
- `peg/` and `chat_peg/`: peg-parser.cpp and chat-peg-parser.cpp;
- `answers/`: reading a completion (common_chat_parse) and its notes.

Below them: `messages.py` the request's parsing and rewrites, `context.py` one render
with its variables, `jinja.py` llama.cpp's Jinja semantics, `capabilities.py` /
`tracking.py` its capability probes, `templates_init.py` the template as loaded, and
`builtins.py` its hand-written formats (`--chat-template NAME`).
"""

from app.render.engines.llamacpp.engine import LlamaCppEngine

__all__ = ["LlamaCppEngine"]
