"""Debian's Chromium as the browser tests and `bench.page` drive it (Playwright downloads
no browser)."""

from __future__ import annotations

import os
import shutil

#: Quiet, headless Debian Chromium (no sandbox: the tests may run as root in a container).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def find_chromium() -> str | None:
    """Debian's Chromium, or None (`./playground test` installs the chromium package)."""
    found = shutil.which("chromium") or "/usr/bin/chromium"
    return found if os.path.exists(found) else None
