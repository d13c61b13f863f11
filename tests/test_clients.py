"""Per-client limits count by the right key, and believe proxies only when told to."""

from __future__ import annotations

import pytest
from flask import Flask

from app.web.clients import client_key
from app.web.factory import create_app


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("unix-socket", "unix-socket"),
    ],
)
def test_client_keys(address, key):
    assert client_key(address) == key


def _seen_address(app: Flask, headers: dict[str, str]) -> str:
    @app.get("/test-client-key")
    def key() -> str:
        return client_key()

    client = app.test_client()
    return client.get(
        "/test-client-key", headers=headers, environ_base={"REMOTE_ADDR": "198.51.100.1"}
    ).get_data(as_text=True)


def test_forwarded_for_is_ignored_without_trusted_proxies(tmp_path):
    app = create_app({"TESTING": True, "DATA_DIR": str(tmp_path)})
    assert _seen_address(app, {"X-Forwarded-For": "203.0.113.9"}) == "198.51.100.1"


def test_one_trusted_proxy_gives_the_address_it_saw(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_TRUSTED_PROXIES", "1")
    app = create_app({"TESTING": True, "DATA_DIR": str(tmp_path)})
    # A client that forges an entry gets only what the proxy appended believed.
    forged = {"X-Forwarded-For": "10.0.0.1, 203.0.113.9"}
    assert _seen_address(app, forged) == "203.0.113.9"
