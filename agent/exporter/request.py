"""HTTP/1.x request heads and responses, strictly: what the endpoint needs and no more.

Only GET and HEAD without a body are served; anything else is answered with the error
status it deserves and the connection is closed, so a request body or a smuggled second
request is never read as the next request.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from email.utils import formatdate

HEAD_END = re.compile(rb"\r?\n\r?\n")
MAX_HEAD_BYTES = 16 * 1024
MAX_HEADERS = 100
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_VERSION = re.compile(r"^HTTP/(\d)\.(\d)$")
REASONS = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 408: "Request Timeout", 429: "Too Many Requests",
    431: "Request Header Fields Too Large", 501: "Not Implemented", 503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}


class BadRequest(ValueError):
    """A request that is answered with ``status`` and then the connection closed."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    target: str
    headers: dict[str, str]  # lower-case names
    keep_alive: bool
    path: str  # the target without its query


def parse_head(head: bytes) -> Request:
    """The request in ``head`` (up to, not including, the blank line)."""
    lines = head.decode("latin-1").split("\n")
    request_line = lines[0].removesuffix("\r")
    parts = request_line.split(" ")
    if len(parts) != 3:
        raise BadRequest(400, "malformed request line")
    method, target, version = parts
    match = _VERSION.match(version)
    if not _TOKEN.match(method) or match is None or not target.startswith("/"):
        raise BadRequest(400, "malformed request line")
    if match.group(1) != "1":
        raise BadRequest(505, "only HTTP/1.0 and HTTP/1.1 are served")
    if len(lines) - 1 > MAX_HEADERS:
        raise BadRequest(431, f"more than {MAX_HEADERS} header fields")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.removesuffix("\r").partition(":")
        if not colon or not _TOKEN.match(name):
            raise BadRequest(400, "malformed header field")
        key = name.lower()
        value = value.strip(" \t")
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    if method not in ("GET", "HEAD"):
        raise BadRequest(405, f"{method} is not served: use GET or HEAD")
    if "transfer-encoding" in headers or headers.get("content-length", "0") != "0":
        raise BadRequest(400, "a request body is not accepted")
    tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
    keep_alive = "keep-alive" in tokens if match.group(2) == "0" else "close" not in tokens
    return Request(method, target, headers, keep_alive, target.split("?", 1)[0])


_date_cache: tuple[int, str] = (0, "")


def http_date() -> str:
    global _date_cache
    second = int(time.time())
    if _date_cache[0] != second:
        _date_cache = (second, formatdate(second, usegmt=True))
    return _date_cache[1]


def response(
    status: int, body: bytes, content_type: str, *, send_body: bool = True,
    keep_alive: bool = True, headers: dict[str, str] | None = None,
) -> bytes:
    """The whole response, head and body, as one buffer (one write, one segment)."""
    lines = [
        f"HTTP/1.1 {status} {REASONS[status]}",
        "Server: smartarray-agent",
        f"Date: {http_date()}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(body)}",
        *(f"{name}: {value}" for name, value in (headers or {}).items()),
    ]
    if not keep_alive:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + body if send_body else head


def error_response(error: BadRequest) -> bytes:
    headers = {"Allow": "GET, HEAD"} if error.status == 405 else None
    return response(error.status, f"{error}\n".encode(), "text/plain; charset=utf-8",
                    keep_alive=False, headers=headers)
