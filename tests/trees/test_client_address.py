"""One function decides the client's address (trees.client_address), for throttling, the
login lockout and anything else that counts callers:

- With no trusted proxies (the default) it is the connection's address; ``X-Forwarded-For``
  is the caller's own words and is ignored.
- With a count of trusted proxies N, it is the N-th entry of ``X-Forwarded-For`` from the
  right: the address the outermost proxy saw. Entries further left are the caller's.
- With trusted addresses or networks, it is the right-most address, walking from the
  connection leftwards, that is not one of them.
- A malformed, huge or missing header never raises: what is not an address is skipped
  in favour of the nearest hop that is.
- The setting is read from ``BRANCHPOINT_TRUSTED_PROXIES`` and refused when unreadable.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory

from config.env import env_proxies
from trees.client_address import client_address, trusted_proxies_read

CLIENT = "203.0.113.9"
PROXY = "10.0.0.2"


def request(remote: str = PROXY, forwarded: str | None = None) -> Any:
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    return RequestFactory().get("/", REMOTE_ADDR=remote, **headers)


@pytest.fixture
def no_proxy(settings: Any) -> None:
    settings.BRANCHPOINT_TRUSTED_PROXIES = 0


@pytest.fixture
def one_proxy(settings: Any) -> None:
    settings.BRANCHPOINT_TRUSTED_PROXIES = 1


@pytest.fixture
def proxy_networks(settings: Any) -> None:
    settings.BRANCHPOINT_TRUSTED_PROXIES = ["10.0.0.0/8", "2001:db8:ffff::/48"]


# No trusted proxy


@pytest.mark.parametrize("forwarded", [None, "198.51.100.1", "198.51.100.1, 198.51.100.2", "x" * 10_240])
def test_without_trusted_proxies_the_connection_is_the_client(no_proxy: None, forwarded: str | None) -> None:
    assert client_address(request(CLIENT, forwarded)) == CLIENT


def test_the_default_trusts_no_proxy() -> None:
    assert client_address(request(CLIENT, "198.51.100.1")) == CLIENT


def test_a_connection_without_a_readable_address_is_the_empty_address(no_proxy: None) -> None:
    assert client_address(request("")) == ""
    assert client_address(request("unix:/run/gunicorn.sock")) == ""


def test_addresses_are_normalised(no_proxy: None) -> None:
    assert client_address(request("2001:DB8:0:0::1")) == "2001:db8::1"
    assert client_address(request("::ffff:203.0.113.9")) == CLIENT


# A count of trusted proxies


def test_behind_one_proxy_the_client_is_the_address_it_appended(one_proxy: None) -> None:
    assert client_address(request(PROXY, CLIENT)) == CLIENT


def test_behind_one_proxy_what_the_caller_wrote_is_ignored(one_proxy: None) -> None:
    """The caller sent ``X-Forwarded-For: 192.0.2.1``; the proxy appended what it saw."""
    assert client_address(request(PROXY, f"192.0.2.1, {CLIENT}")) == CLIENT


def test_behind_two_proxies_the_client_is_what_the_outer_one_saw(settings: Any) -> None:
    settings.BRANCHPOINT_TRUSTED_PROXIES = 2

    assert client_address(request(PROXY, f"192.0.2.1, {CLIENT}, 10.0.0.1")) == CLIENT


def test_a_request_with_fewer_entries_than_proxies_uses_the_left_most(settings: Any) -> None:
    settings.BRANCHPOINT_TRUSTED_PROXIES = 2

    assert client_address(request(PROXY, CLIENT)) == CLIENT
    assert client_address(request(PROXY)) == PROXY


def test_an_unreadable_entry_gives_way_to_the_next_hop_towards_us(settings: Any) -> None:
    settings.BRANCHPOINT_TRUSTED_PROXIES = 2

    assert client_address(request(PROXY, "garbage, 10.0.0.1")) == "10.0.0.1"
    assert client_address(request(PROXY, "garbage")) == PROXY


@pytest.mark.parametrize(
    ("entry", "address"),
    [("203.0.113.9:51234", CLIENT), ("[2001:db8::7]:443", "2001:db8::7"), (" 203.0.113.9 ", CLIENT)],
)
def test_ports_brackets_and_spaces_are_dropped(one_proxy: None, entry: str, address: str) -> None:
    assert client_address(request(PROXY, entry)) == address


@pytest.mark.parametrize(
    "forwarded", ["", ",,,", "9" * 10_240, "1.2.3.4," * 2_000 + "garbage", "[::1", "\x00", "ä" * 300]
)
def test_a_malformed_or_huge_header_never_raises(one_proxy: None, forwarded: str) -> None:
    assert client_address(request(PROXY, forwarded)) in (PROXY, "1.2.3.4", "::1")


# Trusted addresses and networks


def test_a_connection_from_outside_the_trusted_networks_is_the_client(proxy_networks: None) -> None:
    assert client_address(request(CLIENT, "192.0.2.1")) == CLIENT


def test_the_right_most_untrusted_address_is_the_client(proxy_networks: None) -> None:
    assert client_address(request(PROXY, f"192.0.2.1, {CLIENT}, 10.1.2.3")) == CLIENT


def test_trusted_ipv6_networks_are_walked_too(proxy_networks: None) -> None:
    assert client_address(request("2001:db8:ffff::1", f"{CLIENT}, 2001:db8:ffff::2")) == CLIENT


def test_a_chain_of_only_trusted_addresses_ends_at_its_left_most(proxy_networks: None) -> None:
    assert client_address(request(PROXY, "10.9.9.9, 10.1.2.3")) == "10.9.9.9"


def test_an_unreadable_entry_stops_the_walk_at_the_proxy_that_passed_it(proxy_networks: None) -> None:
    assert client_address(request(PROXY, f"{CLIENT}, garbage")) == PROXY


# The setting


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("", 0),
        ("0", 0),
        ("1", 1),
        ("10.0.0.0/8, 192.0.2.7", ["10.0.0.0/8", "192.0.2.7"]),
        ("2001:db8::/32", ["2001:db8::/32"]),
    ],
)
def test_the_setting_is_a_count_or_addresses(monkeypatch: pytest.MonkeyPatch, raw: str, value: Any) -> None:
    monkeypatch.setenv("BRANCHPOINT_TRUSTED_PROXIES", raw)

    assert env_proxies("BRANCHPOINT_TRUSTED_PROXIES") == value


@pytest.mark.parametrize("raw", ["yes", "10.0.0.0/33", "-1", "10.0.0.1, proxy.internal"])
def test_an_unreadable_setting_is_refused_at_start(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("BRANCHPOINT_TRUSTED_PROXIES", raw)

    with pytest.raises(ImproperlyConfigured, match="BRANCHPOINT_TRUSTED_PROXIES"):
        env_proxies("BRANCHPOINT_TRUSTED_PROXIES")


def test_an_unreadable_network_given_in_python_is_refused() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"proxy\.internal"):
        trusted_proxies_read(["proxy.internal"])
