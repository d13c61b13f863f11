"""The documentation pages (`docs/*.md`) as HTML, for the running service.

The pages are written once, for GitHub and for this server alike: a link between pages
(`api.md#post-apirender`) becomes the address this server shows that page at
(`api#post-apirender`), and every heading gets the id GitHub gives it, so one anchor
works in both places. The pages are ours, but the service's Content Security Policy
allows no inline style or script, so raw HTML in a page is escaped and a table's
alignment (a `style` attribute) is dropped. A table wider than a phone scrolls sideways
in a region of its own that the keyboard can reach and a screen reader names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import escape

#: The pages' folder: `docs/` beside the `app` package, in a checkout and in the image.
DOCS_DIR = Path(__file__).resolve().parents[1] / "docs"
#: The page a folder's address shows, as GitHub shows a folder's README.
INDEX = "README.md"
#: A link that leaves the pages alone: a scheme (`https:`), a path from the root, a
#: fragment of the same page.
_ABSOLUTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", re.IGNORECASE)
#: What GitHub drops from a heading's text to make its id: everything but letters,
#: digits, `_`, `-` and spaces.
_NOT_IN_ANCHOR = re.compile(r"[^\w\- ]")


@dataclass(frozen=True)
class DocPage:
    """One page, rendered: its first heading, its HTML and the ids of its headings."""

    title: str
    html: str
    anchors: frozenset[str]


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading of this text (before telling repeats apart)."""
    return _NOT_IN_ANCHOR.sub("", heading.lower()).replace(" ", "-")


def served_href(href: str) -> str:
    """Where a relative link to a page points on the served site: `.md` dropped, and a
    folder's README shown at the folder's address. Other links are left as they are."""
    if _ABSOLUTE.match(href):
        return href
    path, hash_mark, anchor = href.partition("#")
    if not path.endswith(".md"):
        return href
    stem = path.removesuffix(".md")
    if stem == "README" or stem.endswith("/README"):
        stem = stem.removesuffix("README") or "./"
    return stem + hash_mark + anchor


def page_names(folder: Path = DOCS_DIR) -> frozenset[str]:
    """Every page under `folder`, as its path from there (`engines/vllm.md`)."""
    return _names(folder.resolve())


@cache
def _names(folder: Path) -> frozenset[str]:
    """`page_names`, read once per folder: the pages ship with the code."""
    return frozenset(path.relative_to(folder).as_posix() for path in folder.rglob("*.md"))


def page_name(address: str) -> str:
    """The file an address under /docs/ names: `api` is `api.md`, `engines/` is
    `engines/README.md`, the empty address the index."""
    return address + INDEX if address == "" or address.endswith("/") else address + ".md"


def load_page(address: str, folder: Path = DOCS_DIR) -> DocPage | None:
    """The page an address under /docs/ shows, rendered, or None when there is none.

    Only a page that exists in `folder` is ever read, so no address reaches outside it.
    """
    name = page_name(address)
    if name not in page_names(folder):
        return None
    return _rendered(folder.resolve() / name)


@cache
def _rendered(path: Path) -> DocPage:
    """A page rendered once per process: the pages ship with the code."""
    return render_markdown(path.read_text(encoding="utf-8"))


@cache
def _parser() -> MarkdownIt:
    """CommonMark with GitHub's tables, raw HTML escaped."""
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def render_markdown(text: str) -> DocPage:
    """A page's Markdown as HTML, with GitHub's heading ids and the served links."""
    parser = _parser()
    tokens = parser.parse(text)
    anchors: list[str] = []
    title = section = ""
    shown: list[Token] = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            section = heading_text(tokens[index + 1])
            anchor = _unique(github_anchor(section), anchors)
            token.attrSet("id", anchor)
            anchors.append(anchor)
            title = title or section
        elif token.type in ("th_open", "td_open") and token.attrs:
            token.attrs.pop("style", None)
        elif token.type == "inline":
            _serve_links(token.children or [])
        elif token.type == "table_open":
            shown.append(_markup(_TABLE_REGION.format(label=escape(f"Table: {section}"))))
        shown.append(token)
        if token.type == "table_close":
            shown.append(_markup("</div>\n"))
    html = parser.renderer.render(shown, parser.options, {})
    return DocPage(title=title, html=html, anchors=frozenset(anchors))


#: What a table is shown in: a region that scrolls sideways when the table is wider than
#: the screen, focusable so that the keyboard scrolls it, named after its section.
_TABLE_REGION = '<div class="table-scroll" role="region" tabindex="0" aria-label="{label}">\n'


def _markup(html: str) -> Token:
    """A token the renderer writes out as it is: markup of our own, never a page's text."""
    return Token("html_block", "", 0, content=html)


def heading_text(inline: Token) -> str:
    """A heading's text as a reader sees it: code spans without their backticks."""
    return "".join(
        child.content for child in inline.children or [] if child.type in ("text", "code_inline")
    )


def _unique(anchor: str, taken: list[str]) -> str:
    """`anchor`, or `anchor-1`, `anchor-2`... as GitHub tells repeated headings apart."""
    if anchor not in taken:
        return anchor
    number = 1
    while f"{anchor}-{number}" in taken:
        number += 1
    return f"{anchor}-{number}"


def _serve_links(children: list[Token]) -> None:
    """Point the links among an inline token's children at the served pages."""
    for child in children:
        if child.type == "link_open":
            child.attrSet("href", served_href(str(child.attrGet("href") or "")))
