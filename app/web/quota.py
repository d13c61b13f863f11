"""Write allowances over HTTP: which requests are writes, and which client is asking.

The policy is `app.quota`; this adapter counts every request to a storing endpoint
against its client before its view runs (so a refused upload is never parsed), and
tells the share and source stores whom to charge for what they store.
"""

from __future__ import annotations

from flask import Flask, has_request_context, request

from app.quota import Quota, QuotaSettings, ShareKeeper, SourceKeeper
from app.storage import Database
from app.web.clients import client_key

#: The requests that store something: each costs its client one write. Matched by URL,
#: the API's contract, rather than by view function name.
WRITES = frozenset(
    {
        ("POST", "/api/shares"),
        ("POST", "/fragments/share"),
        ("POST", "/api/sources/gguf"),
        ("POST", "/api/sources/hf"),
        ("POST", "/api/sources/hub"),
        ("POST", "/api/sources/url"),
        ("POST", "/api/sources/modelfile"),
        ("POST", "/api/sources/ollama"),
    }
)


def current_client() -> str | None:
    """The client of the request being served; None outside a request (not charged)."""
    return client_key() if has_request_context() else None


class WriteGuard:
    """The quota of one application, and the hooks its stores call."""

    def __init__(self, database: Database, settings: QuotaSettings) -> None:
        self.quota = Quota(database, settings)
        self.sources = SourceKeeper(self.quota, current_client)
        self.shares = ShareKeeper(self.quota, current_client)

    def install(self, app: Flask) -> None:
        """Count writes before their views run; expired sources go on the way."""
        app.extensions["quota"] = self.quota

        @app.before_request
        def count_writes() -> None:
            rule = request.url_rule
            if rule is None or (request.method, rule.rule) not in WRITES:
                return
            self.quota.admit(client_key())  # errors.py reads the body of a refusal
            try:
                self.quota.maintain()
            except Exception:  # housekeeping: the next write tries again, this one proceeds
                app.logger.exception("Deleting expired sources failed")
