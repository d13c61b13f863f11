"""The running service serves the documentation: `docs/*.md` at `/docs/`, as HTML.

The page links to these pages where it explains what it shows, so a user of the service
reads the pages of the very version they run, with no repository at hand. The pages
keep the service's Content Security Policy (no inline script or style) and link to
each other at their served addresses.
"""

from __future__ import annotations

import re

import pytest

from app.docs import INDEX, load_page, page_names, render_markdown

#: Every page, at the address it is served at.
ADDRESSES = sorted(
    name.removesuffix(INDEX) if name.endswith(INDEX) else name.removesuffix(".md")
    for name in page_names()
)


@pytest.mark.parametrize("address", ADDRESSES)
def test_every_page_is_served_as_html_under_the_policy(client, address):
    answer = client.get(f"/docs/{address}")
    assert answer.status_code == 200, address
    assert answer.mimetype == "text/html"
    assert "script-src 'self'" in answer.headers["Content-Security-Policy"]
    html = answer.get_data(as_text=True)
    assert re.search(r"<script|\sstyle=|<style", html) is None, "inline script or style"
    assert f"<title>{load_page(address).title} · " in html


def test_a_page_shows_its_headings_with_githubs_ids_and_its_tables(client):
    html = client.get("/docs/api").get_data(as_text=True)
    assert '<h3 id="post-apirender"><code>POST /api/render</code></h3>' in html
    assert "<title>The JSON API" in html
    assert "<table>" in client.get("/docs/running-a-service").get_data(as_text=True)


def test_links_between_pages_point_at_the_served_addresses(client):
    html = client.get("/docs/api").get_data(as_text=True)
    assert 'href="running-a-service#configuration"' in html  # api.md: running-a-service.md
    engine = client.get("/docs/engines/transformers").get_data(as_text=True)
    assert 'href="../api#post-apitokenize"' in engine  # engines/transformers.md: ../api.md
    index = client.get("/docs/").get_data(as_text=True)
    assert 'href="engines/"' in index  # engines/README.md is the folder's address
    assert 'href="using-the-page"' in index


def test_a_table_scrolls_in_a_region_the_keyboard_reaches_and_a_reader_names(client):
    html = client.get("/docs/running-a-service").get_data(as_text=True)
    region = 'role="region" tabindex="0" aria-label="Table: Configuration">\n<table>'
    assert f'<div class="table-scroll" {region}' in html
    assert html.count("<table>") == html.count('class="table-scroll"')


def test_raw_html_in_a_page_is_shown_as_text():
    page = render_markdown("# A\n\n<script>alert(1)</script>\n\n| a |\n| :-: |\n| b |\n")
    assert "<script>" not in page.html and "&lt;script&gt;" in page.html
    assert "style=" not in page.html


@pytest.mark.parametrize(
    "address", ["nothing", "../README", "..%2fREADME", "api.md", "engines/nothing", "%2e%2e/"]
)
def test_only_the_pages_are_served(client, address):
    assert client.get(f"/docs/{address}").status_code == 404


def test_a_folder_without_its_slash_opens_its_index(client):
    answer = client.get("/docs/engines")
    assert answer.status_code in (301, 302, 308)
    assert answer.headers["Location"].endswith("/docs/engines/")
    assert client.get("/docs").status_code in (301, 308)


def test_a_missing_page_tells_a_browser_where_the_pages_are(client):
    answer = client.get("/docs/nothing", headers={"Accept": "text/html"})
    assert answer.status_code == 404
    assert 'href="/docs/"' in answer.get_data(as_text=True)


def test_the_page_links_to_the_documentation(client):
    html = client.get("/").get_data(as_text=True)
    assert 'href="/docs/"' in html
