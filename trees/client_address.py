"""Who is on the other end of a request: the one place that decides the client's address.

Throttling (annotation.api.throttling), the login lockout (django-axes, through
``AXES_CLIENT_IP_CALLABLE``) and anything else that counts or records callers by
address ask ``client_address``. The address is the connection's (``REMOTE_ADDR``)
unless ``settings.BRANCHPOINT_TRUSTED_PROXIES`` names the proxies in front of us:

- a count ``N``: every request comes through N proxies, each appending the address
  it saw to ``X-Forwarded-For``; the client is the N-th entry from the right (what the
  outermost proxy saw). Entries to the left of it are whatever the client sent.
- addresses or networks (``10.0.0.0/8``, ``192.0.2.7``): walking from the connection
  leftwards through ``X-Forwarded-For``, the client is the first address that is
  not one of them (the right-most untrusted one).

Anything the client wrote itself is never believed, so rotating ``X-Forwarded-For``
changes nothing. A malformed or huge header never raises: what cannot be read as
an address is not an address, and the answer falls back to the last hop that could.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# No address is longer than this ("[" IPv6 with an IPv4 tail and a zone "]:port"); longer
# entries are rejected before parsing, so a 10 KB entry costs nothing.
MAX_ENTRY_CHARS = 80
# More hops than any real chain of proxies; entries further left are never looked at.
MAX_HOPS = 30


def client_address(request: HttpRequest) -> str:
    """The client's address as a normalised string (``"203.0.113.9"``, ``"2001:db8::1"``).

    ``""`` only when the connection itself has no readable address (a server
    misconfigured to pass none), so every such request counts as one caller.
    """
    peer = _address(request.META.get("REMOTE_ADDR", ""))
    trusted = trusted_proxies_read(settings.BRANCHPOINT_TRUSTED_PROXIES)
    if peer is None:
        return ""
    if not trusted:
        return str(peer)
    forwarded = _forwarded_entries(request.META.get("HTTP_X_FORWARDED_FOR", ""))
    if isinstance(trusted, int):
        return str(_counted(peer, forwarded, trusted))
    return str(_right_most_untrusted(peer, forwarded, trusted))


def trusted_proxies_read(value: int | Sequence[str]) -> int | tuple[Network, ...]:
    """The setting as a count (0: none) or networks; raises ImproperlyConfigured when unreadable."""
    if isinstance(value, int):
        if value < 0:
            raise ImproperlyConfigured(f"BRANCHPOINT_TRUSTED_PROXIES={value}: a count must be 0 or more")
        return value
    return _networks(tuple(value))


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f'BRANCHPOINT_TRUSTED_PROXIES: "{entry}" is neither a count nor an address or network'
            ) from None
    return tuple(networks)


def _forwarded_entries(header: str) -> list[str]:
    """The header's right-most ``MAX_HOPS`` entries, left to right."""
    return [entry.strip() for entry in header.rsplit(",", MAX_HOPS)[-MAX_HOPS:]] if header else []


def _counted(peer: Address, forwarded: list[str], count: int) -> Address:
    """The N-th entry from the right, written by the outermost of N trusted proxies.

    With fewer entries than proxies (a request that skipped some), the left-most
    entry is as far as we can see; with none at all, the connection's address.
    """
    start = len(forwarded) - min(count, len(forwarded))
    # An unreadable entry (a proxy that wrote garbage) gives way to the next hop towards us.
    for entry in forwarded[start:]:
        address = _address(entry)
        if address is not None:
            return address
    return peer


def _right_most_untrusted(peer: Address, forwarded: list[str], trusted: tuple[Network, ...]) -> Address:
    """Walking from the connection leftwards, the first address that is not a trusted proxy."""
    current = peer
    for entry in reversed(forwarded):
        if not _is_trusted(current, trusted):
            return current
        hop = _address(entry)
        if hop is None:
            # What a trusted proxy received cannot be read: that proxy is the last hop we know.
            return current
        current = hop
    return current


def _is_trusted(address: Address, trusted: tuple[Network, ...]) -> bool:
    return any(address.version == network.version and address in network for network in trusted)


def _address(text: str) -> Address | None:
    """``text`` as an address (a port, IPv6 brackets and a zone are dropped), or None."""
    text = text.strip()
    if not text or len(text) > MAX_ENTRY_CHARS:
        return None
    if text.startswith("["):  # [2001:db8::1]:443
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:  # 203.0.113.9:51234
        text = text.partition(":")[0]
    text = text.partition("%")[0]  # fe80::1%eth0
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:203.0.113.9 is 203.0.113.9
    return address
