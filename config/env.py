"""Typed readers for settings that come from the environment."""

import ipaddress
import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r}: expected one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r}: expected an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_proxies(name: str) -> int | list[str]:
    """Who may tell us the client's address: a count of proxies (``"1"``), or their
    addresses and networks (``"10.0.0.0/8, 192.0.2.7"``); unset or empty is none (0)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return 0
    if raw.isdigit():
        return int(raw)
    entries = [part.strip() for part in raw.split(",") if part.strip()]
    for entry in entries:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}={raw!r}: expected a count of proxies or their addresses/networks, "
                f'and "{entry}" is neither'
            ) from None
    return entries
