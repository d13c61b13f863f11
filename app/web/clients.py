"""Who is asking: the client key that per-client limits (rates, concurrency) count by.

The address is the TCP peer's, unless `PLAYGROUND_TRUSTED_PROXIES` says how many proxies
stand in front: then werkzeug's `ProxyFix` (installed by the app factory) takes the
client's address from that many entries of `X-Forwarded-For`, and nothing a client
writes in that header is believed beyond them.
"""

from __future__ import annotations

import ipaddress

from flask import request

#: IPv6 clients get a whole /64 (one customer's network, often one machine that
#: rotates its address): counted per address, they could multiply their allowance.
IPV6_PREFIX = 64


def client_key(address: str | None = None) -> str:
    """The key of the client behind this request (or of `address`): an IPv4 address, an
    IPv6 /64 network, or the raw text for anything else (a Unix socket peer)."""
    raw = address if address is not None else (request.remote_addr or "")
    try:
        parsed = ipaddress.ip_address(raw)
    except ValueError:
        return raw or "unknown"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/{IPV6_PREFIX}", strict=False))
    return str(parsed)
