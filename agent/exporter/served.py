"""What ``serve`` answers: the page the daemon published, then ``serve``'s own process.

The daemon's page carries the daemon's ``process_*`` (render.py); ``serve`` is another
process, with its own memory, descriptors, CPU and start time. They follow the published
page under their own names, ``smartarray_serve_process_*`` (prometheus_client's process
collector with the namespace ``smartarray_serve``), so that no name is on the page twice.
Like the page, they are made once per published page (each collection round, and when the
daemon touches the file), never per scrape; so is the gzip form.

Sample lines::

    process_resident_memory_bytes 4.1533440e+07
    smartarray_serve_process_resident_memory_bytes 2.3199744e+07
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest

NAMESPACE = "smartarray_serve"


def own_registry() -> CollectorRegistry:
    """This process's ``smartarray_serve_process_*``."""
    out = CollectorRegistry(auto_describe=False)
    ProcessCollector(namespace=NAMESPACE, registry=out)
    return out


class ServedExposition:
    """``body(compressed)`` for the HTTP server: ``published()`` followed by ``own``, or None
    (a 503) while nothing recent is published."""

    def __init__(self, published: Callable[[], bytes | None], own: CollectorRegistry) -> None:
        """``published()`` returns the same object for as long as the page is unchanged."""
        self._published = published
        self._own = own
        self._lock = threading.Lock()
        self._source: bytes | None = None
        self._pages = (b"", b"")  # plain, gzipped

    def body(self, compressed: bool = False) -> bytes | None:
        source = self._published()
        if source is None:
            return None
        with self._lock:
            if source is not self._source:
                plain = source + generate_latest(self._own)
                self._pages = (plain, gzip.compress(plain, compresslevel=6, mtime=0))
                self._source = source
            plain, gzipped = self._pages
            return gzipped if compressed else plain
