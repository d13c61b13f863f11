"""Browser tests: the page driven through Debian's Chromium with Playwright."""
