"""HTTPS to the iLO: TLS verified by default, a Redfish session (login, then logout) with HTTP
basic auth as the fallback for a service without sessions, and time limits that hold however
slowly the bytes arrive: ``connect_timeout_s`` for the TCP connect and TLS handshake,
``read_timeout_s`` for the whole of each answer (from the request to its last byte), and
``read_deadline_s`` for the whole read (login to logout). A limit that passes shuts the
socket down from a timer thread, which ends any receive in progress: a per-receive timeout
alone lets an iLO that sends a byte a second hold a read for ever.

The password, the basic-auth header and the session token never reach a log line or an error
message: messages name the host, the request and the credentials file, nothing else.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import Message
from urllib.parse import urlsplit

from smartarray_agent.collectors.redfish.credentials import CredentialsError, load_credentials
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.settings import RedfishSettings

log = logging.getLogger(__name__)

SESSIONS = "/redfish/v1/SessionService/Sessions/"
_NO_SESSION_SERVICE = frozenset({404, 405, 501})
# Bounds on what an iLO may make the agent hold: a real answer is 1-20 kB and a whole read
# (a host with 8 controllers and 100 drives) under 1 MiB, while JSON parses to up to 32 times
# its size (a 16 MiB answer of `{}` objects took 450 MiB): one answer at most 1 MiB, all the
# answers of one read (login to logout) at most 2 MiB, which hold 64 MiB at the worst. The
# units' MemoryMax= is reckoned from these (docs/privileges.md).
MAX_ANSWER_BYTES = 2**20
MAX_READ_BYTES = 2 * 2**20
LOGOUT_GRACE_S = 2.0  # a logout after the read's deadline still gets this long


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: Message
    body: bytes


def tls_context(settings: RedfishSettings) -> ssl.SSLContext:
    """Verifying (system store, or only ``ca_file`` when set) unless ``verify_tls`` is off."""
    if not settings.verify_tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    cafile = str(settings.ca_file) if settings.ca_file is not None else None
    try:
        return ssl.create_default_context(cafile=cafile)
    except (ssl.SSLError, OSError) as error:
        raise RedfishError(f"CA file {cafile}: not a usable PEM bundle ({error})") from None


class RedfishClient:
    """``with RedfishClient(settings) as client: client.get(path)``: logs in on entry (with
    the login of ``credentials_file``, read now) and out on exit, over one kept-alive
    connection. The read's deadline (monotonic) is
    ``read_deadline_s`` from now, or ``deadline`` (``/probe``'s) when that is sooner: no
    request starts after it and none waits past it, but the logout, which gets
    ``LOGOUT_GRACE_S`` more."""

    def __init__(self, settings: RedfishSettings, deadline: float | None = None) -> None:
        self.settings = settings
        try:
            self._credentials = load_credentials(settings.credentials_file)
        except CredentialsError as error:
            raise RedfishError(str(error)) from None
        own = time.monotonic() + settings.read_deadline_s
        self.deadline = own if deadline is None else min(deadline, own)
        self._tls = tls_context(settings)
        self._where = f"{settings.host}:{settings.port}"
        self._connection: http.client.HTTPSConnection | None = None
        self._auth: dict[str, str] = {}  # the session token's or basic auth's header
        self._session: str | None = None  # the session's path, for the logout
        self._read_bytes = 0  # the answers' bodies so far, against MAX_READ_BYTES

    def __enter__(self) -> RedfishClient:
        try:
            self._login()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def get(self, path: str) -> dict:
        """The JSON object at ``path``; any other answer than 200 with a JSON object raises."""
        found = self.get_optional(path)
        if found is None:
            raise RedfishError(f"{self._where}: GET {path}: HTTP 404")
        return found

    def get_optional(self, path: str) -> dict | None:
        """Like :meth:`get`, but None when the resource does not exist (404)."""
        answer = self._get(path)
        if answer.status == 404:
            return None
        if answer.status != 200:
            raise RedfishError(f"{self._where}: GET {path}: HTTP {answer.status}")
        return _json_object(answer.body, f"{self._where}: GET {path}")

    def close(self) -> None:
        """Log out (best effort: a failure is logged, not raised) and close the connection."""
        try:
            token = "X-Auth-Token" in self._auth
            if token and self._session is not None:
                answer = self._request("DELETE", self._session, self._auth)
                if answer.status not in (200, 202, 204):
                    log.warning("logout from %s: HTTP %d", self._where, answer.status)
            elif token:
                log.warning("no session address from %s to log out; the iLO ends the session "
                            "when it times out", self._where)
        except RedfishError as error:
            log.warning("logout failed: %s", error)
        finally:
            self._auth, self._session = {}, None
            self._drop_connection()

    def _login(self) -> None:
        body = json.dumps(
            {"UserName": self._credentials.username, "Password": self._credentials.password}
        ).encode()
        answer = self._request(
            "POST", SESSIONS, {"Content-Type": "application/json"}, body
        )
        token = answer.headers.get("X-Auth-Token")
        if answer.status in (200, 201) and token:
            self._auth = {"X-Auth-Token": token}
            location = answer.headers.get("Location")
            self._session = urlsplit(location).path if location else None
            return
        if answer.status in (401, 403):
            raise RedfishError(
                f"{self._where}: login refused (HTTP {answer.status}): check the user name and "
                f"password in {self.settings.credentials_file}"
            )
        if answer.status in _NO_SESSION_SERVICE or 200 <= answer.status < 300:
            log.info("%s offers no Redfish session (HTTP %d); using basic auth",
                     self._where, answer.status)
            pair = f"{self._credentials.username}:{self._credentials.password}".encode()
            self._auth = {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
            return
        raise RedfishError(f"{self._where}: session login failed: HTTP {answer.status}")

    def _get(self, path: str) -> _Answer:
        answer = self._request("GET", path, self._auth)
        if answer.status in (401, 403):
            raise RedfishError(
                f"{self._where}: GET {path} refused (HTTP {answer.status}): check the user "
                f"name, password and privileges in {self.settings.credentials_file}"
            )
        return answer

    def _request(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None = None
    ) -> _Answer:
        request = f"{method} {path}"
        left = self._time_left(request, logout=method == "DELETE")
        connection = self._connect(left)
        assert connection.sock is not None
        connection.sock.settimeout(left)  # no one receive waits longer than the answer may
        failure: BaseException | None = None
        with _cut_off(connection, left) as cut:
            try:
                connection.request(method, path, body=body,
                                   headers={"Accept": "application/json", **headers})
                response = connection.getresponse()
                data = response.read(MAX_ANSWER_BYTES + 1)
            except (OSError, http.client.HTTPException) as error:
                failure = error
        if cut.is_set() or isinstance(failure, TimeoutError):
            # the whole answer did not come in time, or one receive waited all of it
            self._drop_connection()
            raise RedfishError(
                f"{self._where}: no complete answer to {request} within "
                f"{_waited(left, self.settings.read_timeout_s, 'read_timeout_s')}")
        if failure is not None:
            self._drop_connection()
            raise RedfishError(f"{self._where}: {request} failed: {_reason(failure)}")
        self._read_bytes += len(data)
        if len(data) > MAX_ANSWER_BYTES or self._read_bytes > MAX_READ_BYTES:
            self._drop_connection()
            raise RedfishError(
                f"{self._where}: {request}: " + (
                    "answer larger than 1 MiB (MAX_ANSWER_BYTES)" if len(data) > MAX_ANSWER_BYTES
                    else "the read's answers passed 2 MiB (MAX_READ_BYTES)"))
        log.debug("%s %s: HTTP %d", self._where, request, response.status)
        return _Answer(response.status, response.headers, data)

    def _time_left(self, request: str, logout: bool) -> float:
        """How long ``request`` may take, from sending it to the last byte of its answer:
        ``read_timeout_s``, or less when the read's deadline is nearer. A logout is still
        tried after the deadline, for ``LOGOUT_GRACE_S``: the session is the iLO's to keep
        otherwise, and iLOs have few."""
        left = self.deadline - time.monotonic()
        if logout:
            left = max(left, LOGOUT_GRACE_S)
        elif left <= 0:
            raise RedfishError(f"{self._where}: {request}: not sent, the read's time is up "
                               f"({self.settings.read_deadline_s:g} s, read_deadline_s)")
        return min(self.settings.read_timeout_s, left)

    def _connect(self, left: float) -> http.client.HTTPSConnection:
        if self._connection is not None and self._connection.sock is not None:
            return self._connection
        timeout = min(self.settings.connect_timeout_s, left)
        connection = http.client.HTTPSConnection(
            self.settings.host, self.settings.port, timeout=timeout, context=self._tls,
        )
        try:
            with _cut_off(connection, timeout) as cut:
                try:
                    connection.connect()  # TCP connect and TLS handshake
                except OSError:
                    if not cut.is_set():
                        raise
                    raise TimeoutError from None
        except TimeoutError:
            connection.close()
            raise RedfishError(
                f"connecting to {self._where} timed out after "
                f"{_waited(timeout, self.settings.connect_timeout_s, 'connect_timeout_s')}"
            ) from None
        except ssl.SSLCertVerificationError as error:
            connection.close()
            raise RedfishError(
                f"{self._where}: TLS certificate not trusted ({error.verify_message}); set "
                f"ca_file to the CA (or the certificate) of the iLO"
            ) from None
        except OSError as error:
            connection.close()
            raise RedfishError(f"cannot connect to {self._where}: {_reason(error)}") from None
        self._connection = connection
        return connection

    def _drop_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _waited(seconds: float, setting: float, name: str) -> str:
    """``5 s (connect_timeout_s)``, or ``0.42 s (the read's time)`` when a deadline cut it."""
    if seconds >= setting:
        return f"{setting:g} s ({name})"
    return f"{seconds:.2g} s (the read's time)"


@contextmanager
def _cut_off(connection: http.client.HTTPSConnection, seconds: float) -> Iterator[threading.Event]:
    """Shut the connection's socket down when ``seconds`` pass inside the block: a receive
    blocked on it, or on its TLS handshake, ends at once. The event says whether it did."""
    cut = threading.Event()

    def shut() -> None:
        cut.set()
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # the plain socket's: TLS state is not touched
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    timer = threading.Timer(seconds, shut)
    timer.daemon = True
    timer.start()
    try:
        yield cut
    finally:
        timer.cancel()


def _json_object(body: bytes, where: str) -> dict:
    # Hostile JSON is an answer that is not JSON too: an integer past the 4,300-digit limit
    # (ValueError) or nesting deeper than the parser recurses (RecursionError).
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise RedfishError(f"{where}: the answer is not JSON") from None
    if not isinstance(data, dict):
        raise RedfishError(f"{where}: the answer is not a JSON object")
    return data


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__
