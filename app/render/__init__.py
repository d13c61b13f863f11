"""Sandboxed rendering: the environment, the render itself and the worker pool."""
