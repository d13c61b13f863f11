"""The page without a browser: plain form posts, fragments, share links, headers."""

from __future__ import annotations

import json
import re

from app.pipeline import tokens_view
from app.web.factory import create_app

HELLO = [{"role": "user", "content": "Hello!"}]
XSS = '<img src=x onerror="alert(1)"></textarea><script>alert(2)</script>'


def form(**fields: object) -> dict[str, str]:
    values = {"template": "{{ messages[0].content }}", "messages": json.dumps(HELLO)}
    for name, value in fields.items():
        values[name] = value if isinstance(value, str) else json.dumps(value)
    return values


def test_first_visit_shows_chatml_and_its_prompt(client):
    response = client.get("/")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "&lt;|im_start|&gt;" in html
    assert 'id="prompt"' in html and "What is the capital of France?" in html


def test_security_headers_on_every_page(client):
    headers = client.get("/").headers
    csp = headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert client.post("/api/render", json={}).headers["X-Content-Type-Options"] == "nosniff"


def test_styles_need_the_nonce_of_their_response(client):
    """The editor's <style> elements are allowed by a nonce that no two answers share,
    and that only the editor's own script tag carries."""
    nonces = []
    for _ in range(2):
        response = client.get("/")
        csp = response.headers["Content-Security-Policy"]
        (nonce,) = re.findall(r"style-src 'self' 'nonce-([A-Za-z0-9_-]{20,})';", csp)
        html = response.get_data(as_text=True)
        assert re.findall(r'<[^>]*nonce="([^"]*)"', html) == [nonce]
        assert re.search(rf'<script src="/static/vendor/template-editor.js" nonce="{nonce}"', html)
        nonces.append(nonce)
    assert nonces[0] != nonces[1]
    assert "script-src 'self';" in csp  # scripts stay without a nonce: only our files


def test_page_has_no_inline_script_or_style(client):
    html = client.get("/").get_data(as_text=True)
    inline_scripts = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", html)
    assert inline_scripts == []
    assert " style=" not in html and "<style" not in html


def test_plain_form_post_renders_the_whole_page(client):
    response = client.post("/", data=form(template="[{{ messages[0].content }}]"))
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "[Hello!]" in html and "<form" in html


def test_plain_form_post_can_load_a_library_template(client):
    data = form(action="load_library", library="chatml")
    html = client.post("/", data=data).get_data(as_text=True)
    assert "&lt;|im_start|&gt;user" in html


def test_plain_form_post_loads_the_menus_choice_not_the_entry_loaded_before(client):
    # The `library` field names the entry in the editor; the menu's pick is `library_choice`.
    data = form(action="load_library", library="chatml", library_choice="llama3.1")
    html = client.post("/", data=data).get_data(as_text=True)
    assert "&lt;|start_header_id|&gt;user" in html
    assert 'name="library" id="library" value="llama3.1"' in html


def test_fragment_reports_template_error_line(client):
    response = client.post("/fragments/output", data=form(template="a\nb\n{% if %}", seq="7"))
    html = response.get_data(as_text=True)
    assert 'class="problem-line line-link" data-line="3"' in html and 'data-seq="7"' in html
    assert "TemplateSyntaxError" in html


def test_fragment_reports_unreadable_json_fields(client):
    html = client.post("/fragments/output", data=form(messages="[{")).get_data(as_text=True)
    assert "messages" in html and "not valid JSON" in html


def test_user_input_is_shown_as_text(client):
    data = form(
        template=XSS + "{{ messages[0].content }}", messages=[{"role": "user", "content": XSS}]
    )
    html = client.post("/fragments/output", data=data).get_data(as_text=True)
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html


def test_share_link_reopens_the_same_state(client):
    state = {
        "template": "{{ strftime_now('%d %b %Y') }}|{{ messages[0].content }}",
        "messages": HELLO,
    }
    state["now"] = "2024-07-26T10:00:00"
    created = client.post("/api/shares", json=state).json
    page = client.get(created["url"]).get_data(as_text=True)
    assert "26 Jul 2024|Hello!" in page
    assert 'value="2024-07-26T10:00:00"' in page


def test_share_button_stores_the_form(client):
    data = form(now="2024-01-01T00:00:00", template="a\r\nb")
    answer = client.post("/fragments/share", data=data).json
    stored = client.get(answer["url"] + ".json").json
    assert stored["messages"] == HELLO
    assert stored["template"] == "a\nb"
    assert stored["now"].startswith("2024-01-01T00:00:00")


def test_unknown_share_is_404(client):
    assert client.get("/s/" + "0" * 24).status_code == 404


def test_template_download(client):
    # Browsers post text areas with CRLF line ends: the file must have the template's LF.
    response = client.post("/download/template.jinja", data={"template": "{{ x }}\r\ny\n"})
    assert response.get_data(as_text=True) == "{{ x }}\ny\n"
    assert "attachment" in response.headers["Content-Disposition"]


def test_browsers_get_html_errors_and_the_api_json(client):
    page = client.get("/no/such/page", headers={"Accept": "text/html"})
    assert page.status_code == 404 and page.mimetype == "text/html"
    assert "Not Found" in page.get_data(as_text=True)
    api = client.get("/api/no-such-endpoint", headers={"Accept": "text/html"})
    assert api.status_code == 404 and api.json["error"]["type"] == "NotFound"


def test_upload_cap_is_named_in_the_413(tmp_path):
    app = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), "UPLOAD_MB": 0.01})
    response = app.test_client().post(
        "/api/sources/gguf", data=bytes(20_000), content_type="application/octet-stream"
    )
    assert response.status_code == 413
    assert response.json["error"]["max_bytes"] == int(0.01 * 1024 * 1024)


def test_the_tokens_view_without_a_vocabulary_renders_no_message_parts(client, monkeypatch):
    # Where each message's part ends is a sandbox render per message, wanted only to count
    # tokens: without a vocabulary there is nothing to count them with.
    asked = []
    monkeypatch.setattr(tokens_view, "message_ends_of", lambda *args: asked.append(args))
    html = client.post("/fragments/output", data=form(view="tokens")).get_data(as_text=True)
    assert "No vocabulary is loaded" in html
    assert asked == []
