"""The llama.cpp engine: what llama-server's `/apply-template` returns.

`engine.py` is the engine; `render.py` follows llama-server's steps; `messages.py` its
parsing and rewrites, `handlers.py`/`hooks.py` its model-family handlers,
`reasoning.py` its autoparser, `context.py` one render with its variables, `jinja.py`
its Jinja semantics, `capabilities.py`/`tracking.py` its capability probes and
`builtins.py` its hand-written formats (`--chat-template NAME`).
"""

from app.render.engines.llamacpp.engine import LlamaCppEngine

__all__ = ["LlamaCppEngine"]
