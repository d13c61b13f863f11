"""Ollama: which template a model made from a chat template uses, what it sends, and how
it reads the answer.

Laid out like `ollama/ollama` (read at fb30760996871fa9460115c753afd2c60d4ab0f7,
2026-08-21): `template/` its template package, `choice.py` the choice `server/images.go`
makes, `renderers/` and `parsers/` its model-specific code (`model/renderers`,
`model/parsers`), `commands.py` the command lines.
"""

from app.render.engines.ollama.engine import OllamaEngine

__all__ = ["OllamaEngine"]
