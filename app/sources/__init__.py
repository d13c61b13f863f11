"""Where templates come from: GGUF headers, Hugging Face repos, uploads."""
