"""Trailing-edge debounce: a burst of udev events (a controller and its disks) asks for one
collection, ``delay_s`` after the last event, at most ``max_delay_s`` after the first."""

from __future__ import annotations


class Debounce:
    def __init__(self, delay_s: float, max_delay_s: float) -> None:
        self.delay_s = delay_s
        self.max_delay_s = max(max_delay_s, delay_s)
        self._first: float | None = None
        self._last: float | None = None

    def poke(self, now: float) -> None:
        if self._first is None:
            self._first = now
        self._last = now

    def due_at(self) -> float | None:  # None: nothing asked for one
        if self._first is None or self._last is None:
            return None
        return min(self._last + self.delay_s, self._first + self.max_delay_s)

    def clear(self) -> None:
        self._first = self._last = None
