"""The documentation pages (`docs/*.md`), served as HTML at /docs/.

The page links here where it explains what it shows (`docs_link` in its templates), so a
visitor reads the pages of the version they run; `app.docs` renders them.
"""

from __future__ import annotations

from flask import Blueprint, redirect, render_template, url_for
from markupsafe import Markup
from werkzeug.wrappers import Response

from app.docs import load_page
from app.errors import NotFound

blueprint = Blueprint("docs", __name__)


@blueprint.app_template_global()
def docs_link(address: str = "", anchor: str = "") -> str:
    """The address of a page under /docs/ (`using-the-page`), at a heading's id if given."""
    url = url_for("docs.page", address=address)
    return f"{url}#{anchor}" if anchor else url


@blueprint.get("/docs/", defaults={"address": ""})
@blueprint.get("/docs/<path:address>")
def page(address: str) -> str | Response:
    """One page, or the index of a folder of pages."""
    found = load_page(address)
    if found is None:
        if address and load_page(address + "/") is not None:
            return redirect(url_for("docs.page", address=address + "/"), code=308)
        raise NotFound(f"There is no documentation page at /docs/{address}.")
    return render_template("docs.html", title=found.title, body=Markup(found.html))
