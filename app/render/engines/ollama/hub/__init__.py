"""`ollama run hf.co/USER/REPO`: the TEMPLATE the Hugging Face Hub serves for a GGUF's chat
template (`mapper.py`, by `@huggingface/ollama-utils` in Node) and the way Ollama then
takes (`route.py`)."""
