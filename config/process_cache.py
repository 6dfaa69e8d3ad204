"""The cache of one process (Django's local-memory cache), holding nothing for longer than
``LONGEST`` seconds.

Without Redis each web process caches the sessions it reads (``cached_db``). The database
stays their truth, but a process learns of a change another process made only when its copy
expires, and Django keeps a session's copy for the session's whole age (two weeks): a
sign-out, or a session an admin deleted, would still sign its cookie in on the other
workers. Capped here (``PROCESS_CACHE_SECONDS``, 60 by default), they follow within a minute;
a shared cache (``REDIS_URL``) has no such delay and is not capped.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.locmem import LocMemCache


class ProcessCache(LocMemCache):
    def __init__(self, name: str, params: dict[str, Any]) -> None:
        super().__init__(name, params)
        self.longest = int(params.get("LONGEST", 60))

    def get_backend_timeout(self, timeout: Any = DEFAULT_TIMEOUT) -> float | None:
        """When an entry expires: as asked, but never later than ``longest`` seconds from now."""
        expires = super().get_backend_timeout(timeout)
        latest = time.time() + self.longest
        return latest if expires is None else min(expires, latest)
