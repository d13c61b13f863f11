"""Chat Template Playground: see exactly what your model receives."""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

from flask import Flask

from app.config import load_settings, max_body_bytes, render_limits
from app.render.pool import SandboxPool
from app.shares.store import ShareStore
from app.sources.library import DEFAULT_LIBRARY, Library
from app.sources.store import SourceStore


def data_dir(app: Flask) -> Path:
    """Where stored sources (and the default database) live."""
    return Path(app.config["DATA_DIR"] or app.instance_path)


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """The WSGI application: defaults, then `PLAYGROUND_*` variables, then `test_config`."""
    app = Flask(__name__, static_folder="../static", instance_relative_config=True)
    app.config.update(load_settings())
    app.config.update(test_config or {})
    app.config["MAX_CONTENT_LENGTH"] = max_body_bytes(app.config)

    # Worker processes start on first use, in the process that serves requests.
    pool = SandboxPool(render_limits(app.config), workers=int(app.config["THREADS"]))
    app.extensions["sandbox_pool"] = pool
    atexit.register(pool.close)

    app.extensions["source_store"] = SourceStore(
        data_dir(app) / "sources", capacity=int(app.config["SOURCE_CACHE"])
    )

    library_dir = app.config["LIBRARY_DIR"]
    app.extensions["library"] = Library(Path(library_dir) if library_dir else DEFAULT_LIBRARY)

    # Validates PLAYGROUND_DATABASE_URL now (a bad one fails start-up); opens nothing yet.
    app.extensions["share_store"] = ShareStore.from_url(app.config["DATABASE_URL"], data_dir(app))

    from app.web import analysis, api, errors, library, page, shares, sources

    app.register_blueprint(api.blueprint)
    app.register_blueprint(sources.blueprint)
    app.register_blueprint(library.blueprint)
    app.register_blueprint(analysis.blueprint)
    app.register_blueprint(shares.blueprint)
    app.register_blueprint(page.blueprint)
    errors.register(app)
    page.register_security_headers(app)
    return app
