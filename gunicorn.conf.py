"""gunicorn settings, read from the same `PLAYGROUND_*` variables as the app."""

import os
import shutil
import tempfile
from pathlib import Path

from app.config import load_settings

_settings = load_settings()

bind = _settings["BIND"]
workers = _settings["WORKERS"]
# Request threads: one per admitted expensive request (each has a sandbox process), one
# per request waiting for a sandbox, one per remote load reading from the network, and
# RESERVED_THREADS that none of those ever hold, so health checks and static files never
# queue behind renders (app/web/admission.py).
threads = (
    _settings["THREADS"] + _settings["QUEUE"] + _settings["FETCHES"] + _settings["RESERVED_THREADS"]
)
worker_class = "gthread"
wsgi_app = "app.web.factory:create_app()"
# No control socket: it lives at a fixed path in the home folder, which several servers
# (tests, benchmarks, replicas) would fight over.
control_socket_disable = True

# Metrics: each worker writes its values to files in PROMETHEUS_MULTIPROC_DIR and /metrics
# adds up every worker's. prometheus_client reads the variable when it is first imported,
# in the workers, which inherit it from here. Without one given, a private temporary
# folder, removed on exit.
_OWN_METRICS_DIR = not os.environ.get("PROMETHEUS_MULTIPROC_DIR")
if _OWN_METRICS_DIR:
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="playground-metrics-")


def on_starting(server):
    """Start from zero: forget the metric files of an earlier run."""
    folder = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink()


def when_ready(server):
    """Say when the sandbox's priorities cannot work here (see app/pool/guard.py)."""
    from app.pool.guard import priority_warning

    if warning := priority_warning():
        server.log.warning(warning)
    for address in server.cfg.address:
        server.log.info(_ready_line(address))


def _ready_line(address):
    """The line a person starting the playground looks for: the address to open."""
    if isinstance(address, str):  # a Unix socket: a proxy in front serves the page
        return f"The playground is ready on the socket {address} (open it through your proxy)"
    host, port = address[0], address[1]
    host = {"0.0.0.0": "localhost", "::": "localhost", "": "localhost"}.get(host, host)
    host = f"[{host}]" if ":" in host else host
    return f"The playground is ready: open http://{host}:{port}/"


def child_exit(server, worker):
    """A worker is gone: drop its live gauges (its counters still count)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    if _OWN_METRICS_DIR:
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)
