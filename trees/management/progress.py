"""A one-line progress bar for long commands, drawn only on a terminal."""

from __future__ import annotations

import time
from typing import TextIO


class ProgressBar:
    WIDTH = 30

    def __init__(self, stream: TextIO, *, total: int | None, unit: str = "item"):
        self.stream = stream
        self.total = total
        self.unit = unit
        self.enabled = stream.isatty()
        self._last_draw = 0.0

    def update(self, count: int, done: int | None = None) -> None:
        """Redraw with ``count`` units processed and ``done`` of ``total`` (bytes, say)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw < 0.1:
            return
        self._last_draw = now
        if self.total and done is not None:
            fraction = min(done / self.total, 1.0)
            filled = int(fraction * self.WIDTH)
            bar = "#" * filled + "." * (self.WIDTH - filled)
            self.stream.write(f"\r[{bar}] {fraction:4.0%}  {self._counted(count)}")
        else:
            self.stream.write(f"\r{self._counted(count)}")
        self.stream.flush()

    def _counted(self, count: int) -> str:
        return f"{count:,} {self.unit}{'' if count == 1 else 's'}"

    def finish(self) -> None:
        if self.enabled and self._last_draw:
            self.stream.write("\r" + " " * (self.WIDTH + 40) + "\r")
            self.stream.flush()
