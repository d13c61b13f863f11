"""The application factory: settings, stores, worker pools and blueprints, wired once."""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from app.config import (
    load_settings,
    max_body_bytes,
    render_limits,
    source_limits,
    web_sources_bytes,
)
from app.quota import QuotaSettings
from app.shares.store import ShareStore
from app.sources.library import DEFAULT_LIBRARY, Library
from app.sources.store import SourceStore
from app.storage import open_database
from app.web.strict_json import StrictJSONProvider


def data_dir(app: Flask) -> Path:
    """The folder of the default SQLite database."""
    return Path(app.config["DATA_DIR"] or app.instance_path)


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """The WSGI application: defaults, then `PLAYGROUND_*` variables, then `test_config`."""
    # Named after the package, not this module: templates, static files and the instance
    # folder are found relative to `app/`, as they always were.
    app = Flask("app", static_folder="../static", instance_relative_config=True)
    app.json = StrictJSONProvider(app)  # no NaN in an answer, whatever an upload holds
    app.config.update(load_settings())
    app.config.update(test_config or {})
    app.config["MAX_CONTENT_LENGTH"] = max_body_bytes(app.config)
    proxies = int(app.config["TRUSTED_PROXIES"])
    if proxies > 0:
        # The client's address is what the proxies we trust say it is, and no more.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies)  # type: ignore[method-assign]

    # Imported here, not at the top: importing the factory (say, to read `data_dir`)
    # should not load prometheus_client nor start writing metric files.
    from app.web import observability

    observability.install(app)

    from app.web import admission, guards

    # After the access log's clock (a refused write is timed too), and before admission:
    # a write from another site is refused as such (403), whatever the capacity.
    guards.register(app)
    # After the access log's clock: a request's logged duration includes its wait.
    admission.register(app)

    # Worker processes start on first use, in the process that serves requests.
    pool = observability.MeasuredSandboxPool(
        render_limits(app.config),
        workers=int(app.config["THREADS"]),
        on_cpu=observability.note_worker_cpu,
    )
    app.extensions["sandbox_pool"] = pool
    atexit.register(pool.close)

    # Shares and sources live in one database, so replicas that share it share both.
    # Validates PLAYGROUND_DATABASE_URL now (a bad one fails start-up); opens nothing yet.
    database = open_database(app.config["DATABASE_URL"], data_dir(app))
    app.extensions["database"] = database
    # Per-client write allowances and the bounds on stored sources (`app.quota`).
    from app.web.quota import WriteGuard

    guard = WriteGuard(database, QuotaSettings.from_config(app.config))
    guard.install(app)
    app.extensions["share_store"] = ShareStore(database, keeper=guard.shares)
    # Uploads are parsed, and tokenizers built and run, only in bounded source workers.
    source_workers = observability.MeasuredSourceWorkers(
        lanes=int(app.config["SOURCE_WORKERS"]),
        cpu_seconds=float(app.config["SOURCE_CPU_SECONDS"]),
        memory_bytes=int(app.config["SOURCE_MEMORY_MB"]) * 1024 * 1024,
        limits=source_limits(app.config),
        on_cpu=observability.note_worker_cpu,
    )
    atexit.register(source_workers.close)
    app.extensions["source_workers"] = source_workers
    app.extensions["source_store"] = SourceStore(
        database,
        source_workers,
        on_lookup=observability.count_source_lookup,
        keeper=guard.sources,
        memory_bytes=web_sources_bytes(app.config),
    )

    library_dir = app.config["LIBRARY_DIR"]
    app.extensions["library"] = Library(Path(library_dir) if library_dir else DEFAULT_LIBRARY)

    from app.web import (
        answers,
        api,
        docs,
        errors,
        library,
        metrics,
        outputs,
        page,
        remote,
        shares,
        sources,
    )

    app.register_blueprint(api.blueprint)
    app.register_blueprint(sources.blueprint)
    remote.install(app)  # the Hub and GGUF URLs, read into the source store
    app.register_blueprint(library.blueprint)
    app.register_blueprint(outputs.blueprint)
    app.register_blueprint(answers.blueprint)
    app.register_blueprint(shares.blueprint)
    app.register_blueprint(page.blueprint)
    app.register_blueprint(metrics.blueprint)
    app.register_blueprint(docs.blueprint)
    errors.register(app)
    page.register_security_headers(app)
    return app
