"""The llama.cpp engine: what llama-server's `/apply-template` returns."""
