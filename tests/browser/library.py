"""Loading a library template as a user does, waited for as the tests need it."""

from __future__ import annotations

from playwright.sync_api import Page


def load_library(page: Page, name: str) -> None:
    """Choose `name` in Library and wait until the editor holds its text (a prompt that
    looks right is not enough: the default ChatML template ends as Qwen3's does)."""
    text = page.request.get(f"/api/library/{name}").json()["template"]
    page.select_option("#library-select", name)  # a choice with the mouse loads it at once
    page.wait_for_function("(text) => window.playground.editor.getValue() === text", arg=text)
