"""Analyses of rendered prompts, computed without Flask.

`diff` compares two prompts (character opcodes, unified and side-by-side line views, token
opcodes); `commands` writes the command lines that run a model with a template.
"""
