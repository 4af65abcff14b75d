"""systemd's notify protocol (docs/agent.md, "systemd"); nothing outside systemd. The
variables leave the environment when read, so that no child inherits them."""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import MutableMapping

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self, address: str | None, watchdog_interval_s: float | None = None) -> None:
        self._address = "\0" + address[1:] if address and address.startswith("@") else address
        self.watchdog_interval_s = watchdog_interval_s
        self._warned = False

    @classmethod
    def from_environment(cls, environ: MutableMapping[str, str] = os.environ) -> Notifier:
        address = environ.pop("NOTIFY_SOCKET", None) or None
        usec = environ.pop("WATCHDOG_USEC", None)
        pid = environ.pop("WATCHDOG_PID", None)
        interval = None
        if usec and usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            interval = int(usec) / 1e6
        return cls(address, interval)

    def send(self, *assignments: str) -> bool:
        """False when not sent (never raises)."""
        if self._address is None:
            return False
        message = "\n".join(assignments).encode("utf-8", errors="replace")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(self._address)
                sock.sendall(message)
        except OSError as error:
            if not self._warned:
                log.warning("cannot notify systemd at %s: %s", self._address, error)
                self._warned = True
            return False
        return True

    def ready(self, status: str) -> bool:
        return self.send("READY=1", f"STATUS={status}")

    def reloading(self) -> bool:
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.send("RELOADING=1", f"MONOTONIC_USEC={usec}", "STATUS=reloading")

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def watchdog(self) -> bool:  # the collection loop's alone: a stuck loop stops the pings
        if self.watchdog_interval_s is None:
            return False
        return self.send("WATCHDOG=1")

    def stopping(self) -> bool:
        return self.send("STOPPING=1", "STATUS=stopping")
