"""llama.cpp's chat PEG parser (common/chat-peg-parser.cpp): the builder's chat tags and
tool-call layouts on top of `peg`, and the mappers that turn a parse into a message.
"""
