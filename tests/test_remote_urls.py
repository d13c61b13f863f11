"""GGUF files by URL: Range reads, and the rules against server-side request forgery."""

from __future__ import annotations

import socket
import time

import pytest

from app.sources import public_url
from app.sources.remote_sources import RemoteSettings
from tests.support.fake_hub import RangeHost
from tests.support.remote_fixtures import GGUF_TEMPLATE, SPARSE_BYTES, gguf_file
from tests.support.remote_install import remote_installer
from tests.support.trickle_host import TLS_ANSWER, TrickleHost

MiB = 1 << 20


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A 40 GB sparse GGUF file (its header, then a hole)."""
    folder = tmp_path_factory.mktemp("urls")
    return gguf_file(folder / "big.gguf", "Big", tokens=2000, size=SPARSE_BYTES)


@pytest.fixture()
def private_host(model):
    """A file server on loopback: a private address."""
    host = RangeHost()
    host.files["/models/big.gguf"] = model
    yield host
    host.close()


@pytest.fixture()
def remote_with(app):
    with remote_installer(app, RemoteSettings(seconds=10.0)) as install:
        yield install


def load(client, url):
    return client.post("/api/sources/url", json={"url": url})


def test_a_private_server_is_refused_by_default_and_read_when_allowed(
    client, private_host, remote_with
):
    url = f"{private_host.url}/models/big.gguf"
    refused = load(client, url)
    assert refused.status_code == 400
    assert refused.json["error"]["type"] == "Refused"
    assert "PLAYGROUND_URL_ALLOW_PRIVATE" in refused.json["error"]["message"]
    assert private_host.requests == []  # not even connected to

    remote_with(allow_private=True)
    loaded = load(client, url)
    assert loaded.status_code == 200, loaded.get_data()
    assert loaded.json["templates"] == {"default": GGUF_TEMPLATE}
    assert loaded.json["file_name"] == "big.gguf"
    assert loaded.json["origin"] == {"type": "url", "url": url, "file": "big.gguf"}
    assert private_host.bytes_sent() < 32 * MiB


def test_a_url_on_the_configured_hub_endpoint_is_trusted_and_nothing_else_private(
    client, private_host, remote_with, model
):
    # A private Hub mirror the operator set up: its Hub ids were read, its URLs refused.
    other = RangeHost()
    other.files["/elsewhere.gguf"] = model
    try:
        remote_with(hf_endpoint=f"{private_host.url}/")
        loaded = load(client, f"{private_host.url}/models/big.gguf")
        assert loaded.status_code == 200, loaded.get_data()
        assert loaded.json["templates"] == {"default": GGUF_TEMPLATE}
        # Another private server, and a redirect from the mirror to one, are not trusted.
        refused = load(client, f"{other.url}/elsewhere.gguf")
        assert refused.status_code == 400
        assert "not a public address" in refused.json["error"]["message"]
        private_host.redirects["/moved.gguf"] = f"{other.url}/elsewhere.gguf"
        redirected = load(client, f"{private_host.url}/moved.gguf")
        assert redirected.status_code == 400
        assert other.requests == []
    finally:
        other.close()


def test_only_the_endpoints_own_path_is_trusted(client, private_host, remote_with, model):
    # A mirror under a path of a larger server trusts that path, not the whole server.
    private_host.files["/admin/other.gguf"] = model
    remote_with(hf_endpoint=f"{private_host.url}/models")
    assert load(client, f"{private_host.url}/models/big.gguf").status_code == 200
    refused = load(client, f"{private_host.url}/admin/other.gguf")
    assert refused.status_code == 400
    assert "not a public address" in refused.json["error"]["message"]
    assert load(client, f"{private_host.url}/modelsX/big.gguf").status_code == 400
    for climb in ("/models/../admin/other.gguf", "/models/%2e%2e/admin/other.gguf"):
        assert load(client, f"{private_host.url}{climb}").status_code == 400, climb


def test_a_hub_endpoint_that_is_no_url_names_its_setting_and_never_its_password():
    with pytest.raises(ValueError, match="PLAYGROUND_HF_ENDPOINT") as refused:
        public_url.PublicURLReader(
            allow_private=False, max_redirects=1, trusted="ftp://user:secret@mirror/hf"
        )
    assert "secret" not in str(refused.value)
    # Credentials in the endpoint itself are the operator's business: it still starts.
    reader = public_url.PublicURLReader(
        allow_private=False, max_redirects=1, trusted="https://user:secret@mirror.internal/hf"
    )
    assert reader.trusted == ("https", "mirror.internal", 443, "/hf/")


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://127.0.0.1:1/x.gguf", "not a public address"),
        ("http://localhost:1/x.gguf", "not a public address"),
        ("http://[::1]:1/x.gguf", "not a public address"),
        ("http://10.1.2.3/x.gguf", "not a public address"),
        ("http://172.16.0.1/x.gguf", "not a public address"),
        ("http://192.168.1.1/x.gguf", "not a public address"),
        ("http://169.254.169.254/latest/meta-data/", "not a public address"),
        ("http://100.64.0.1/x.gguf", "not a public address"),
        ("http://[::ffff:127.0.0.1]/x.gguf", "not a public address"),
        ("http://0.0.0.0/x.gguf", "not a public address"),
        ("ftp://example.com/x.gguf", "Only http and https"),
        ("file:///etc/passwd", "Only http and https"),
        ("https://user:secret@example.com/x.gguf", "user name or password"),
        ("http:///x.gguf", "names no host"),
        ("http://[64:ff9b::a9fe:a9fe]/x.gguf", "not a public address"),
        ("http://[::ffff:0:7f00:1]/x.gguf", "not a public address"),  # SIIT, to 127.0.0.1
        ("http://exa\u200dmple\u00ad..com/x.gguf", "not a valid domain name"),
    ],
)
def test_refusals(client, remote_with, url, words):
    response = load(client, url)
    assert response.status_code == 400
    assert response.json["error"]["type"] == "Refused"
    assert response.json["error"]["field"] == "url"
    assert words in response.json["error"]["message"]


@pytest.mark.parametrize(
    ("address", "public"),
    [("8.8.8.8", True), ("2606:4700:4700::1111", True), ("127.0.0.1", False),
     ("10.0.0.1", False), ("fd00::1", False), ("fe80::1", False), ("224.0.0.1", False),
     ("::ffff:10.0.0.1", False), ("192.0.2.1", False),
     # IPv6 that carries an IPv4 address: NAT64, 6to4 and IPv4-compatible forms reach it.
     ("64:ff9b::7f00:1", False), ("64:ff9b:1::a9fe:a9fe", False), ("64:ff9b::a00:1", False),
     ("2002:a00:1::", False), ("::127.0.0.1", False),
     # SIIT's IPv4-translated form (::ffff:0:a.b.c.d, RFC 7915) reaches the address too.
     ("::ffff:0:7f00:1", False), ("::ffff:0:a9fe:a9fe", False), ("::ffff:0:808:808", True),
     # RFC 8215's local-use NAT64 prefix puts the IPv4 address where its length says (at
     # /48, in bits 48-87): never public. Reserved and site-local IPv6 neither.
     ("64:ff9b:1:a9fe:a9:fe00:808:808", False), ("0:0:1::7f00:1", False), ("fec0::1", False),
     ("64:ff9b::808:808", True), ("2002:808:808::", True),
     # Not public, though Python 3.11's `ipaddress` says global: RFC 9637's documentation
     # prefix 3fff::/20, and the retired 6to4 relay anycast 192.88.99.0/24 (RFC 7526),
     # also as 6to4 carries it.
     ("3fff::1", False), ("3fff:fff:ffff::1", False), ("192.88.99.1", False),
     ("2002:c058:6301::", False)],
)  # fmt: skip
def test_which_addresses_are_public(address, public):
    assert public_url.is_public(address) is public


@pytest.fixture()
def outside_host(monkeypatch):
    """A server on 127.0.0.2 that the rules take for a public address (for this test only)."""
    try:
        host = RangeHost("127.0.0.2")
    except OSError:
        pytest.skip("127.0.0.2 cannot be bound here")
    real = public_url.is_public
    monkeypatch.setattr(public_url, "is_public", lambda a: a == "127.0.0.2" or real(a))
    yield host
    host.close()


def test_a_redirect_to_a_private_address_is_refused(
    client, remote_with, outside_host, private_host
):
    outside_host.redirects["/model.gguf"] = f"{private_host.url}/models/big.gguf"
    response = load(client, f"{outside_host.url}/model.gguf")
    assert response.status_code == 400
    assert "not a public address" in response.json["error"]["message"]
    assert [path for _, path, _ in outside_host.requests] == ["/model.gguf"]
    assert private_host.requests == []


def test_redirects_are_followed_and_capped(client, remote_with, outside_host, model):
    outside_host.files["/real.gguf"] = model
    outside_host.redirects["/moved.gguf"] = "/real.gguf"
    assert load(client, f"{outside_host.url}/moved.gguf").status_code == 200
    outside_host.redirects["/loop.gguf"] = "/loop.gguf"
    response = load(client, f"{outside_host.url}/loop.gguf")
    assert response.status_code == 400
    assert "PLAYGROUND_FETCH_REDIRECTS" in response.json["error"]["message"]
    assert len(outside_host.requests) == 2 + 1 + 5  # moved, real, then the first hop and 5 more


def test_a_server_that_ignores_range_is_read_only_up_to_the_cap(client, remote_with, private_host):
    private_host.ignore_range = True
    remote_with(allow_private=True)
    response = load(client, f"{private_host.url}/models/big.gguf")
    assert response.status_code == 200, response.get_data()
    # The connection is closed after 4 MiB; the server got a few more into the socket.
    assert private_host.bytes_sent() < 16 * MiB


def test_a_file_over_the_cap_is_413(client, remote_with, private_host):
    remote_with(allow_private=True, max_bytes=4096)
    response = load(client, f"{private_host.url}/models/big.gguf")
    assert response.status_code == 413
    assert response.json["error"]["limit"] == "upload_mb"


def test_a_slow_host_is_504_within_the_timeout(client, remote_with):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts connections, never answers
    try:
        remote_with(allow_private=True, seconds=1.0)
        port = listener.getsockname()[1]
        started = time.perf_counter()
        response = load(client, f"http://127.0.0.1:{port}/x.gguf")
        assert time.perf_counter() - started < 2.0
        assert response.status_code == 504
        assert response.json["error"]["limit"] == "fetch_seconds"
        assert "127.0.0.1" in response.json["error"]["message"]
    finally:
        listener.close()


@pytest.mark.timing
def test_a_host_that_trickles_its_headers_is_cut_off_at_the_deadline(client, remote_with):
    # One byte every 0.2 s never trips a read timeout: only a deadline for the whole
    # exchange ends it, and the fetch thread must be free again right after.
    host = TrickleHost(interval=0.2)
    try:
        remote_with(allow_private=True, seconds=1.0, threads=1)
        started = time.monotonic()
        first = load(client, f"{host.url}/x.gguf")
        assert (first.status_code, first.json["error"]["limit"]) == (504, "fetch_seconds")
        assert time.monotonic() - started < 2.0
        [lifetime] = host.wait_closed(1, timeout=3.0)
        assert lifetime < 1.0 + 1.0, "the connection outlived the budget by over a second"
        # The one fetch thread is free: the next read is taken, not refused as busy.
        second = load(client, f"{host.url}/x.gguf")
        assert (second.status_code, second.json["error"]["limit"]) == (504, "fetch_seconds")
        assert host.accepted == 2
    finally:
        host.close()


@pytest.mark.timing
def test_a_name_whose_dns_never_answers_frees_its_fetch_thread_at_the_deadline(
    client, remote_with, private_host, monkeypatch
):
    # A lookup cannot be interrupted: it held the fetch thread as long as the resolver
    # waited, after the 504, and the next load was refused as busy.
    real = socket.getaddrinfo

    def lookup(host, *args, **kwargs):
        if host == "silent.example":
            time.sleep(4.0)
            raise socket.gaierror("no answer")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    remote_with(allow_private=True, seconds=1.0, threads=1)
    started = time.monotonic()
    first = load(client, "http://silent.example/x.gguf")
    assert (first.status_code, first.json["error"]["limit"]) == (504, "fetch_seconds")
    assert time.monotonic() - started < 2.5
    second = load(client, f"{private_host.url}/models/big.gguf")
    assert second.status_code == 200, second.get_data()


@pytest.mark.timing
def test_a_host_that_trickles_its_tls_handshake_is_cut_off_at_the_deadline(client, remote_with):
    # Inside the TLS handshake the deadline holds too (CPython bounds a handshake as a
    # whole by the socket's timeout, the budget left; the sockets are shut down anyway).
    host = TrickleHost(interval=0.2, answer=TLS_ANSWER)
    try:
        remote_with(allow_private=True, seconds=1.0, threads=1)
        url = host.url.replace("http://", "https://") + "/x.gguf"
        started = time.monotonic()
        first = load(client, url)
        assert (first.status_code, first.json["error"]["limit"]) == (504, "fetch_seconds")
        assert time.monotonic() - started < 2.0
        [lifetime] = host.wait_closed(1, timeout=3.0)
        assert lifetime < 1.0 + 1.0
        assert load(client, url).json["error"]["limit"] == "fetch_seconds"  # not busy
    finally:
        host.close()


def test_a_load_takes_a_sandbox_slot_only_to_parse_what_it_read(
    app, client, remote_with, private_host
):
    remote_with(allow_private=True)
    gate = app.extensions["admission"]
    held = [gate.enter("127.0.0.1") for _ in range(gate.per_client)]  # at the client's limit
    try:
        refused = load(client, f"{private_host.url}/models/big.gguf")
    finally:
        for ticket in held:
            gate.leave(ticket)
    # The header was read without a slot; parsing it needed one, and the client had none.
    assert private_host.requests
    assert (refused.status_code, refused.json["error"]["limit"]) == (429, "client_concurrency")
    assert load(client, f"{private_host.url}/models/big.gguf").status_code == 200
    assert gate.counts() == (0, 0)


def test_a_message_that_repeats_a_huge_redirect_is_cut(client, remote_with, private_host):
    # The host of a 60 kB Location came back whole in "The host … is not known".
    private_host.redirects["/far.gguf"] = "http://" + "a" * 60_000 + ".example/x.gguf"
    remote_with(allow_private=True)
    response = load(client, f"{private_host.url}/far.gguf")
    assert response.status_code in (400, 502)
    assert len(response.get_data()) < 8 * 1024
    assert "characters cut]" in response.json["error"]["message"]


def test_a_missing_file_is_404(client, remote_with, private_host):
    remote_with(allow_private=True)
    response = load(client, f"{private_host.url}/models/none.gguf")
    assert response.status_code == 404


def test_a_file_that_is_not_gguf_is_422_and_a_cut_header_409(
    client, remote_with, private_host, model, tmp_path
):
    (tmp_path / "page.html").write_text("<!doctype html><p>a download page</p>")
    with model.open("rb") as whole:  # 40 GB: read its start only
        (tmp_path / "cut.gguf").write_bytes(whole.read(5000))
    private_host.files["/page.gguf"] = tmp_path / "page.html"
    private_host.files["/cut.gguf"] = tmp_path / "cut.gguf"
    remote_with(allow_private=True)
    refused = load(client, f"{private_host.url}/page.gguf")
    assert refused.status_code == 422
    assert refused.json["error"]["type"] == "GGUFError"
    cut = load(client, f"{private_host.url}/cut.gguf")
    assert cut.status_code == 409
    assert cut.json["error"]["need_bytes"] > 5000


def test_an_internationalised_host_is_looked_up_and_named_in_its_ascii_form():
    # It used to reach the Host header as is, and http.client cannot write it (a 500).
    reader = public_url.PublicURLReader(allow_private=False, max_redirects=1)
    _, host, port, path = reader._parse("http://пример.испытание:8080/m.gguf?x=1")
    assert (host, port, path) == ("xn--e1afmkfd.xn--80akhbyknj4f", 8080, "/m.gguf?x=1")
