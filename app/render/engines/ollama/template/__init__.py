"""Ollama's `template` package: the index `ollama create` matches a GGUF's chat template
against (`named.py`)."""
