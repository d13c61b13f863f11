"""llama.cpp's PEG parser (common/peg-parser.cpp): the arena, its builder and parsers,
and the JSON-schema nodes its `schema()` rules are built from
(common/json-schema-to-grammar.cpp's part that parsing needs).
"""
