"""What the page shows, computed without Flask.

`prompt` finds a rendered prompt's special tokens and template markers; `token_data`
lines tokens up with the text they cover.
"""
