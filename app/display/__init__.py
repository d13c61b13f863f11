"""What the page shows, computed without Flask.

`prompt` cuts a rendered prompt into display segments (special tokens, template markers,
whitespace) and lines tokens up with the text they cover.
"""
