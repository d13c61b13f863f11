module playground/ollama-gotemplate

go 1.19
