"""HTTP adapters: parse the request, call the core, shape the answer."""
