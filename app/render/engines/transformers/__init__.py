"""The transformers engine: `apply_chat_template(..., tokenize=False)` in Python."""
