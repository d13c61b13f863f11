"""llama.cpp's differential autoparser (common/chat-diff-analyzer.cpp,
chat-auto-parser-generator.cpp and chat-auto-parser-helpers.cpp).

`analyzer` (with `probes`, `diffing`, `tool_analysis` and its helpers, and the
per-family `workarounds`) learns a template's markup from probe renders into an
`analysis.Analysis`; `generator` builds the chat PEG parser from it.
"""
