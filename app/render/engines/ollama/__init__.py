"""Ollama: what it sends to a model and how it reads the answer (ollama/ollama fb30760)."""
