"""Ollama's Go templates, rendered by Go: the worker (`main.go` and its files) and its runner."""
