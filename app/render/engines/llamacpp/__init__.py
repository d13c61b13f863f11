"""The llama.cpp engine: what llama-server's `/apply-template` returns.

`render.py` renders the prompt of `answers/apply.py`, the one port of
`common_chat_templates_apply` (the answer parser reads the same result);
`messages.py` its parsing and rewrites, `answers/handlers/` its model families (one
record each) with `hooks.py` their prompt hooks, `answers/analyzer.py` its autoparser,
`context.py` one render with its variables, `jinja.py` its Jinja semantics,
`capabilities.py`/`tracking.py` its capability probes and `builtins.py` its
hand-written formats (`--chat-template NAME`).
"""

from app.render.engines.llamacpp.render import LlamaCppEngine

__all__ = ["LlamaCppEngine"]
