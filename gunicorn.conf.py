"""gunicorn settings, read from the same `PLAYGROUND_*` variables as the app."""

from app.config import load_settings

_settings = load_settings()

bind = _settings["BIND"]
workers = _settings["WORKERS"]
threads = _settings["THREADS"]
worker_class = "gthread"
wsgi_app = "app:create_app()"
