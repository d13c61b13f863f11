"""Range reads of a URL a visitor gave, safe against server-side request forgery.

The service reads the URL on the visitor's behalf from inside the operator's network, so
by default it goes only where the visitor could go anyway: `http` or `https`, no
credentials in the URL, and every address the host name resolves to must be public (not
loopback, private, link-local such as cloud metadata at 169.254.169.254, shared,
multicast or reserved), checked again at every redirect. The connection is then made to
the very address that was checked, so a DNS answer that changes between the check and
the connection (DNS rebinding) cannot send it elsewhere. urllib3 is used because it lets
us name that address while TLS still checks the certificate of the host name.
`PLAYGROUND_URL_ALLOW_PRIVATE` lifts the address rule (a private deployment).
"""

from __future__ import annotations

import ipaddress
import socket
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as WaitTimeout
from dataclasses import dataclass
from urllib.parse import unquote, urljoin, urlsplit

import urllib3

from app.sources.remote import Budget, RemoteError, take

#: Read sizes of one answer.
_CHUNK = 1 << 16
#: Sent as the user agent, so that hosts can tell what reads their files.
USER_AGENT = "chat-template-playground (GGUF header reader)"


@dataclass(frozen=True)
class Target:
    """One hop: the URL, its host name and port, and the checked address to connect to."""

    url: str
    scheme: str
    host: str
    port: int
    address: str
    path: str


@dataclass(frozen=True)
class Answer:
    """A whole (bounded) answer: the last hop, its status, headers (names in lower
    case) and body."""

    target: Target
    status: int
    headers: dict[str, str]
    body: bytes


#: Statuses that send the request elsewhere (with a Location).
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _close(response: urllib3.BaseHTTPResponse) -> None:
    response.release_conn()
    response.close()


def refused(message: str) -> RemoteError:
    """A URL the rules do not allow (400, `field: url`)."""
    return RemoteError("Refused", message, 400, {"field": "url"})


#: IPv6 prefixes that carry an IPv4 address in their last 32 bits and reach it through a
#: translator (NAT64: RFC 6052's well-known prefix; SIIT's IPv4-translated addresses,
#: RFC 7915), which `ipaddress` may count as global whatever IPv4 address they carry.
TRANSLATED_PREFIXES = (
    ipaddress.ip_network("64:ff9b::/96"),
    ipaddress.ip_network("::ffff:0:0:0/96"),
)
#: Ranges that are not on the public internet although Python 3.11's `ipaddress` counts
#: them as global (its tables are older than the registrations): RFC 9637's IPv6
#: documentation prefix, and the 6to4 relay anycast prefix RFC 7526 retired.
NOT_GLOBAL = (
    ipaddress.ip_network("3fff::/20"),
    ipaddress.ip_network("192.88.99.0/24"),
)
#: RFC 8215's local-use NAT64 prefix: a translator of the local network, which puts the
#: IPv4 address where its own prefix length says (at /48, in bits 48-87). Never public.
LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")


def is_public(address: str) -> bool:
    """Whether an address is on the public internet. An IPv6 address that carries an IPv4
    one (IPv4-mapped, IPv4-compatible, 6to4, NAT64, SIIT) counts as the IPv4 address it
    carries: `64:ff9b::a9fe:a9fe` reaches 169.254.169.254 on a NAT64 network. Reserved,
    multicast, (IPv6) site-local and `NOT_GLOBAL` addresses are not public, whatever
    `ipaddress` says of them."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in LOCAL_NAT64:
            return False
        ip = _carried_ipv4(ip) or ip
    if ip.is_multicast or ip.is_reserved or any(ip in network for network in NOT_GLOBAL):
        return False
    return ip.is_global and not (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local)


def _carried_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    last_32_bits = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if any(ip in prefix for prefix in TRANSLATED_PREFIXES):
        return last_32_bits
    if int(ip) >> 32 == 0 and int(ip) > 1:  # ::a.b.c.d, IPv4-compatible (not :: or ::1)
        return last_32_bits
    return None


class PublicURLReader:
    """Reads byte ranges of URLs under the rules above. `trusted` is the operator's own Hub
    endpoint, `PLAYGROUND_HF_ENDPOINT`: URLs under it (same scheme, host and port, and
    its path) are read wherever it is, as its model ids are; no other private address."""

    def __init__(
        self,
        *,
        allow_private: bool,
        max_redirects: int,
        trusted: str | None = None,
        lookups: int = 8,
    ) -> None:
        self.allow_private = allow_private
        self.max_redirects = max_redirects
        self.trusted = _endpoint(trusted) if trusted else None
        # Host names are looked up in threads of their own: a lookup cannot be
        # interrupted, and one whose DNS server never answers would otherwise hold the
        # fetch thread past the deadline for as long as the resolver retries. At most
        # `lookups` hang at once; past that, lookups wait in line within their budget.
        self._lookups = ThreadPoolExecutor(max(1, lookups), thread_name_prefix="dns-lookup")

    def close(self) -> None:
        """Stop looking up (a lookup under way ends on the resolver's own timeouts)."""
        self._lookups.shutdown(wait=False, cancel_futures=True)

    def _lookup(self, host: str, port: int, budget: Budget) -> list[tuple]:
        """`getaddrinfo` within what is left of the budget (504 past it)."""
        found = self._lookups.submit(
            lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        )
        try:
            return found.result(timeout=budget.remaining())
        except WaitTimeout:
            found.cancel()
            raise budget.timeout() from None

    def check(self, url: str) -> None:
        """Refuse a URL by its form alone (scheme, credentials, host), before any read."""
        self._parse(url)

    def read(self, url: str, start: int, end: int, budget: Budget) -> tuple[bytes, int | None]:
        """Bytes `start` to `end` of the file at `url`, and its size when the server says;
        redirects followed (each hop checked). A server that ignores Range is read from its
        first byte only up to `end`, then the connection is closed."""
        target, response = self._follow(url, {"Range": f"bytes={start}-{end - 1}"}, budget)
        try:
            if response.status == 416:
                return b"", start
            if response.status not in (200, 206):
                raise RemoteError(
                    "NotFound" if response.status == 404 else "BadAnswer",
                    f"{target.host} answered HTTP {response.status} for {target.url}.",
                    404 if response.status == 404 else 502,
                )
            skip = start if response.status == 200 else 0
            data = _take(response, skip, end - start, budget)
            return data, _size(response)
        finally:
            _close(response)

    def fetch(
        self, url: str, max_bytes: int, budget: Budget, headers: dict[str, str] | None = None
    ) -> Answer:
        """The answer to a GET of `url` (redirects followed, each hop checked), whatever
        its status: its first `max_bytes + 1` bytes at most (the caller refuses more)."""
        target, response = self._follow(url, headers or {}, budget)
        try:
            body = _take(response, 0, max_bytes + 1, budget)
            headers_seen = {name.lower(): value for name, value in response.headers.items()}
            return Answer(target, response.status, headers_seen, body)
        finally:
            _close(response)

    def _follow(
        self, url: str, headers: dict[str, str], budget: Budget
    ) -> tuple[Target, urllib3.BaseHTTPResponse]:
        """The last hop's target and answer (the caller closes it), redirects followed."""
        for _ in range(self.max_redirects + 1):
            target = self._target(url, budget)
            response = self._get(target, headers, budget)
            location = response.headers.get("Location")
            if response.status not in _REDIRECTS or not location:
                return target, response
            _close(response)
            url = urljoin(target.url, location)
        raise refused(f"More than {self.max_redirects} redirects (PLAYGROUND_FETCH_REDIRECTS).")

    def _parse(self, url: str) -> tuple[str, str, int, str]:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as error:
            raise refused(f"This is not a URL: {error}.") from None
        if parts.scheme not in ("http", "https"):
            raise refused(f"Only http and https URLs are read, not {parts.scheme or 'this'}:.")
        if parts.username is not None or parts.password is not None:
            raise refused("A URL with a user name or password in it is not read.")
        if not parts.hostname:
            raise refused("The URL names no host.")
        host = _ascii_host(parts.hostname)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return parts.scheme, host, port or (443 if parts.scheme == "https" else 80), path

    def _is_trusted(self, scheme: str, host: str, port: int, path: str) -> bool:
        if self.trusted is None:
            return False
        origin, prefix = self.trusted[:3], self.trusted[3]
        if (scheme, host.lower(), port) != origin or not path.startswith(prefix):
            return False
        # A path that climbs out of the prefix once the server resolves it ("..", encoded
        # or not, or a backslash some servers take for a slash) is not under it.
        decoded = unquote(path.partition("?")[0])
        return "\\" not in decoded and not {".", ".."} & set(decoded.split("/"))

    def _target(self, url: str, budget: Budget) -> Target:
        """The hop's checked address: every address of the host must be allowed (unless
        the hop is under the trusted endpoint)."""
        scheme, host, port, path = self._parse(url)
        trusted = self.allow_private or self._is_trusted(scheme, host, port, path)
        try:
            found = self._lookup(host, port, budget)
        except (OSError, UnicodeError):
            raise RemoteError("Unreachable", f"The host {host} is not known.", 502) from None
        addresses = list(dict.fromkeys(info[4][0] for info in found))
        if not trusted:
            blocked = [address for address in addresses if not is_public(address)]
            if blocked:
                raise refused(
                    f"{host} is at {blocked[0]}, which is not a public address: URLs are read "
                    "only from the public internet (PLAYGROUND_URL_ALLOW_PRIVATE)."
                )
        return Target(url, scheme, host, port, addresses[0], path)

    def _get(
        self, target: Target, extra: dict[str, str], budget: Budget
    ) -> urllib3.BaseHTTPResponse:
        seconds = budget.remaining()
        timeout = urllib3.Timeout(connect=seconds, read=seconds)
        options = {"timeout": timeout, "retries": False, "maxsize": 1}
        if target.scheme == "https":
            pool: urllib3.HTTPConnectionPool = urllib3.HTTPSConnectionPool(
                target.address, target.port, server_hostname=target.host,
                assert_hostname=target.host, **options,
            )  # fmt: skip
        else:
            pool = urllib3.HTTPConnectionPool(target.address, target.port, **options)
        default_port = target.port == (443 if target.scheme == "https" else 80)
        headers = {
            "Host": _host_header(target.host, target.port, default_port),
            "Accept-Encoding": "identity",
            "User-Agent": USER_AGENT,
            **extra,
        }
        try:
            return pool.urlopen(
                "GET", target.path, headers=headers, redirect=False, preload_content=False,
                assert_same_host=False, release_conn=False,
            )  # fmt: skip
        except urllib3.exceptions.TimeoutError:
            raise budget.timeout() from None
        except urllib3.exceptions.HTTPError as error:
            raise RemoteError(
                "Unreachable", f"{target.host} cannot be reached ({type(error).__name__}).", 502
            ) from None


def _endpoint(url: str) -> tuple[str, str, int, str]:
    """The scheme, host, port and path prefix (ending in `/`) of the Hub endpoint; a
    `ValueError` naming the setting, never its password, for one that is no http(s) URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        shown = f"{parts.scheme}://{parts.hostname}" if parts else "this value"
        raise ValueError(f"PLAYGROUND_HF_ENDPOINT ({shown}…) is not an http(s) URL of a Hub.")
    default = 443 if parts.scheme == "https" else 80
    prefix = parts.path.rstrip("/") + "/"
    try:
        host = _ascii_host(parts.hostname).lower()
    except RemoteError as error:
        raise ValueError(f"PLAYGROUND_HF_ENDPOINT: {error}") from None
    return parts.scheme, host, port or default, prefix


def _ascii_host(host: str) -> str:
    """The host name as DNS, the Host header and TLS need it: an internationalised name in
    its ASCII (IDNA) form."""
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        raise refused(f"The host name {host[:100]!r} is not a valid domain name.") from None


def _take(response: urllib3.BaseHTTPResponse, skip: int, size: int, budget: Budget) -> bytes:
    try:
        return take(response.stream(_CHUNK, decode_content=False), skip, size, budget)
    except urllib3.exceptions.TimeoutError:
        raise budget.timeout() from None
    except urllib3.exceptions.HTTPError as error:
        raise RemoteError("Unreachable", f"The read broke off ({type(error).__name__}).") from None


def _host_header(host: str, port: int, default_port: bool) -> str:
    """The Host header: an IPv6 address in brackets, the port unless the scheme's own."""
    shown = f"[{host}]" if ":" in host else host
    return shown if default_port else f"{shown}:{port}"


def _size(response: urllib3.BaseHTTPResponse) -> int | None:
    """The whole file's size: `Content-Range: bytes a-b/SIZE`, or a 200's length."""
    content_range = response.headers.get("Content-Range", "")
    total = content_range.rpartition("/")[2]
    if response.status == 206 and total.isdigit():
        return int(total)
    length = response.headers.get("Content-Length", "")
    return int(length) if response.status == 200 and length.isdigit() else None
