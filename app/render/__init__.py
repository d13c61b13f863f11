"""Sandboxed rendering: the request and engine interface (`core`), the environment, the
bounded render loop and limits every engine shares, the engines (`engines/`) and the
worker pool that runs them."""
