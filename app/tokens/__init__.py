"""Token ids exactly as llama.cpp computes them, with character boundaries.

`vocab.VocabTokenizer` wraps a Hugging Face `tokenizers.Tokenizer` built from a GGUF vocabulary
(`build.build_tokenizer`) and reproduces llama.cpp's special-token partition around it;
`vocab.tokenize` returns `vocab.Token`s with offsets into the input text.
"""
