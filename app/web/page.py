"""The playground page: a plain form, with htmx fragments for live updates."""

from __future__ import annotations

import secrets
from typing import Any

from flask import Blueprint, Response, abort, g, render_template, request
from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup, escape

from app.analysis.examples import EXAMPLES
from app.answers.menu import KINDS as COMPLETION_KINDS
from app.pipeline.origin import template_origin
from app.pipeline.outputs import build_outputs
from app.render.engines import engine_list, named_engines, parser_choices
from app.state import PlaygroundState
from app.state.form import first_visit, form_values, state_from_form
from app.state.library_choice import choose_library, library_tokens
from app.text import first_sentence
from app.web.api import max_json_depth
from app.web.library import library
from app.web.outputs import pipeline
from app.web.shares import load_share

blueprint = Blueprint("page", __name__)

#: The library template the page opens with.
DEFAULT_TEMPLATE = "chatml"


def page_context(state: PlaygroundState, problems: dict[str, str] | None = None) -> dict:
    """What page.html and its fragments need for one state."""
    steps = pipeline()
    outputs = build_outputs(state, steps)
    return {
        "state": state,
        "form": form_values(state),
        "field_problems": problems or {},
        "outputs": outputs,
        "origin": template_origin(state, outputs.source, library()),
        "library_tokens": library_tokens(state, library()),
        "library": library().entries,
        "engines": engine_list(),
        # The engines the page names by their part (their labels, in its sentences).
        "named": named_engines(),
        "parser_engines": parser_choices(),
        "completion_kinds": COMPLETION_KINDS,
        # Key order kept (the menu writes the messages as they are listed), HTML-safe.
        "examples_json": htmlsafe_json_dumps(EXAMPLES, ensure_ascii=False),
        "seq": request.values.get("seq", "0"),
        "page_chars": steps.limits.chars,
    }


@blueprint.app_template_filter("code_spans")
def code_spans(text: str) -> Markup:
    """`text` escaped, its `backquoted` parts as <code> (the engines' notes)."""
    parts = escape(text).split("`")
    return Markup("").join(Markup(f"<code>{p}</code>") if i % 2 else p for i, p in enumerate(parts))


blueprint.add_app_template_global(first_sentence)


@blueprint.app_template_filter("fold")
def fold(text: str) -> Markup:
    """`text` escaped; a long one folded to its first sentence, the rest behind "more"."""
    head, rest = first_sentence(text)
    if not rest:
        return escape(text)
    return Markup(
        '<details class="fold"><summary>{} <span class="more">more</span></summary>{}</details>'
    ).format(head, rest)


@blueprint.get("/")
def index() -> str:
    """A first visit: the ChatML template and a short conversation."""
    template = library().template(DEFAULT_TEMPLATE) or ""
    state = first_visit(template, library=DEFAULT_TEMPLATE)
    return render_template("page.html", **page_context(state))


@blueprint.post("/")
def submit() -> str:
    """The form posted without JavaScript: the whole page, rendered for that state."""
    state, problems = state_from_form(request.form, max_json_depth())
    if request.form.get("action") == "load_library":
        # The menu's choice; the `library` field names the entry loaded before it.
        name = request.form.get("library_choice", request.form.get("library", ""))
        entry = library().entry(name)
        if entry is not None:
            state = choose_library(state, entry, library())
    return render_template("page.html", **page_context(state, problems))


@blueprint.post("/fragments/output")
def output_fragment() -> str:
    """The output views for the posted form (htmx swaps them in while the user types)."""
    state, problems = state_from_form(request.form, max_json_depth())
    return render_template("_output.html", fragment=True, **page_context(state, problems))


@blueprint.get("/s/<share_id>")
def shared(share_id: str) -> tuple[str, int]:
    """A share link: the page with that exact state already rendered."""
    state = load_share(share_id)
    if state is None:
        message = f"There is no share with the id {share_id}."
        return render_template("error.html", title="No such share", message=message), 404
    return render_template("page.html", opened_share=True, **page_context(state)), 200


@blueprint.post("/download/template.jinja")
def download_template() -> Response:
    """The editor's template as a file, for `--chat-template-file`."""
    template = request.form.get("template")
    if template is None:
        abort(400)
    return Response(
        template.replace("\r\n", "\n"),  # form posts carry CRLF; llama.cpp reads the file as is
        mimetype="text/plain; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="template.jinja"'},
    )


def register_security_headers(app: Any) -> None:
    """CSP with no inline scripts, no framing, no MIME sniffing, on every response.

    Styles come from our own files, and from `<style>` elements that carry the response's
    nonce: the template editor (CodeMirror 6) writes its theme into one, and finds the
    nonce on its own script tag (where the browser hides it from the page's markup).
    """

    @app.before_request
    def style_nonce() -> None:
        g.style_nonce = secrets.token_urlsafe(18)

    @app.context_processor
    def nonce_for_templates() -> dict[str, str]:
        return {"style_nonce": g.get("style_nonce", "")}

    @app.after_request
    def headers(response: Response) -> Response:
        nonce = g.get("style_nonce")
        styles = f"'self' 'nonce-{nonce}'" if nonce else "'self'"
        response.headers.setdefault(
            "Content-Security-Policy",
            f"default-src 'self'; script-src 'self'; style-src {styles}; img-src 'self' data:; "
            "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        )
        # frame-ancestors says it for current browsers; X-Frame-Options for older ones.
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response
