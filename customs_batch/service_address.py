"""One service, however its address is written.

Two environments at one service must be told to be one service (each would otherwise take
the objects the other records for new ones, or write its documents into them), and so must
an environment and the state folder it wrote, whatever the letters of the address. RFC 3986
says which addresses are one: the scheme and the host in any case (``https://API.example``
is ``https://api.example``), the scheme's default port written or not (``:443`` for https,
``:80`` for http), and a path with or without its dot segments (``/v1/./`` is ``/v1/``) or
its trailing slash. The address is left as written for everything else.
"""

from __future__ import annotations

import urllib.parse

_DEFAULT_PORTS = {"http": 80, "https": 443}


def service_key(address: str) -> str:
    """``address`` in the one form every way of writing that service's address has; text
    that is no http(s) address (the built-in sandbox's name) is its own key."""
    try:
        parts = urllib.parse.urlsplit(address.strip())
        port = parts.port
    except ValueError:
        return address
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return address
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address keeps its brackets
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{host}" if userinfo else host
    path = _without_dot_segments(parts.path).rstrip("/")
    return urllib.parse.urlunsplit((scheme, netloc, path, parts.query, parts.fragment))


def _without_dot_segments(path: str) -> str:
    """``path`` with its ``.`` and ``..`` segments taken out (RFC 3986, 5.2.4); its other
    segments, empty ones included, as written."""
    kept: list[str] = []
    for segment in path.split("/")[1:]:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    return "".join(f"/{segment}" for segment in kept)


def same_service(first: str | None, second: str | None) -> bool:
    """Whether two addresses (either may be None: none) name one service."""
    if first is None or second is None:
        return first is second
    return service_key(first) == service_key(second)
