"""gunicorn settings, read from the same `PLAYGROUND_*` variables as the app."""

from app.config import load_settings

_settings = load_settings()

bind = _settings["BIND"]
workers = _settings["WORKERS"]
threads = _settings["THREADS"]
worker_class = "gthread"
wsgi_app = "app:create_app()"
# No control socket: it lives at a fixed path in the home folder, which several servers
# (tests, benchmarks, replicas) would fight over.
control_socket_disable = True
