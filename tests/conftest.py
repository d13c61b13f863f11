"""Shared fixtures: the Flask app, its test client and a real gunicorn server.

Helpers that tests and benches share live in `tests.support`; this file only holds the
fixtures built on them.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from app.web.factory import create_app
from tests.support import UNLIMITED_WRITES
from tests.support.page_data import synthetic_vocab
from tests.support.server import LIVE_ENV, Server, start_gunicorn, timing_test
from tests.support.sources import built


@pytest.fixture(scope="session")
def app(tmp_path_factory):
    """One application (and one sandbox pool) for the whole session.

    Every test writes through it from one address, far faster than a client may, so its
    per-client write limits are off; tests/test_quota.py checks them on applications of
    their own. So is the heavy-client rule: tests that run into a limit on purpose would
    make that address heavy for a minute, and whichever test came next from it (the
    files a test process gets vary) would find only one slot (test_admission.py checks
    the rule on gates of its own).
    """
    data = tmp_path_factory.mktemp("data")
    settings = {"TESTING": True, "DATA_DIR": str(data), "HEAVY_SLOTS": 4, **UNLIMITED_WRITES}
    application = create_app(settings)
    yield application
    application.extensions["sandbox_pool"].close()


@pytest.fixture()
def client(app):
    return app.test_client()


@pytest.fixture(scope="session")
def adds_bos(app, tmp_path_factory) -> dict[str, Any]:
    """A loaded GGUF (`adds-bos.gguf`) whose header says its tokenizer adds BOS by itself,
    its tokenizer built."""
    path = synthetic_vocab(tmp_path_factory.mktemp("bos") / "adds-bos.gguf", 600, add_bos=True)
    client = app.test_client()
    answer = client.post(
        "/api/sources/gguf?name=adds-bos.gguf",
        data=path.read_bytes(),
        content_type="application/octet-stream",
    )
    assert answer.status_code == 200, answer.get_data()[:300]
    source = built(client, answer.json)
    assert source["add_bos_token"] is True and source["tokenizer"]["supported"] is True
    return source


@pytest.fixture(scope="session")
def live_server() -> Iterator[Server]:
    """gunicorn with one worker, four threads and a 1 s render limit (to keep tests fast).

    Its tests attack from one address, so the per-client rules and write limits are off
    here; they have their own servers in test_admission_live.py and test_quota.py.
    """
    server = start_gunicorn(LIVE_ENV)
    yield server
    server.close()


_frozen_module: list[object] = [None]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """At each new test module, set what earlier modules left alive aside from the garbage
    collector (`gc.freeze`): the suite's process holds gigabytes of vocabularies and
    recorded corpora by its end, and every full collection would walk them all again,
    which made allocation-heavy tests late in the suite several times slower.

    And say whether the test is a `timing` one, which `Server.survives` requires."""
    if item.get_closest_marker("timing"):
        timing_test.set()
    else:
        timing_test.clear()
    if item.module is not _frozen_module[0]:
        _frozen_module[0] = item.module
        gc.collect()
        gc.freeze()
