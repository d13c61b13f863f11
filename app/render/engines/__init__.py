"""The render engines: each reproduces one program's chat-template rendering."""
