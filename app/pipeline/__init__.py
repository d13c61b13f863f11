"""The one pipeline from a playground state to what the page and the API show, without
Flask: `outputs` binds the state to its source once and runs every step (render,
tokens, diff, analysis, commands, the answer's readings); `views` types what each view
shows. `prompt` finds a rendered prompt's special tokens and template markers;
`token_data` lines tokens up with the text they cover.
"""
