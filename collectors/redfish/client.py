"""HTTPS to the iLO on aiohttp's client: TLS verified by default, a Redfish session (login,
then logout) with HTTP basic auth as the fallback for a service without sessions, and time
limits that hold however slowly the bytes arrive: ``connect_timeout_s`` for the TCP connect
and TLS handshake, ``read_timeout_s`` for the whole of each request (aiohttp's ``total``:
from its start to its answer's last byte, so an iLO that sends a byte a second cannot hold
it), and ``read_deadline_s`` for the whole read (login to logout).

The password, the basic-auth header and the session token never reach a log line or an error
message: messages name the host, the request and the credentials file, nothing else.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import ssl
import time
from urllib.parse import urlsplit

import aiohttp
from multidict import CIMultiDictProxy
from yarl import URL

from smartarray_agent.collectors.redfish.credentials import CredentialsError, load_credentials
from smartarray_agent.collectors.redfish.errors import RedfishError
from smartarray_agent.collectors.redfish.settings import RedfishSettings

log = logging.getLogger(__name__)

SESSIONS = "/redfish/v1/SessionService/Sessions/"
# Bounds on what an iLO may make the agent hold: a real answer is 1-20 kB and a whole read
# (a host with 8 controllers and 100 drives) under 1 MiB, while JSON parses to up to 32 times
# its size (a 16 MiB answer of `{}` objects took 450 MiB): one answer at most 1 MiB, all the
# answers of one read (login to logout) at most 2 MiB, which hold 64 MiB at the worst. The
# units' MemoryMax= is reckoned from these (docs/privileges.md).
MAX_ANSWER_BYTES = 2**20
MAX_READ_BYTES = 2 * 2**20
LOGOUT_GRACE_S = 2.0  # a logout after the read's deadline still gets this long

Answer = tuple[int, CIMultiDictProxy[str], bytes]  # status, headers, body


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
    """``async with RedfishClient(settings) as client: await client.get(path)``: logs in on
    entry (with the login of ``credentials_file``, read now) and out on exit, over one
    kept-alive connection. The read's deadline (monotonic: the event loop's clock) is
    ``read_deadline_s`` from now, or ``deadline`` (``/probe``'s) when that is sooner: no
    request waits past it but the logout, which has LOGOUT_GRACE_S however late it is.
    ``tls``: a context to share between reads (``/probe``'s)."""

    def __init__(self, settings: RedfishSettings, deadline: float | None = None,
                 tls: ssl.SSLContext | None = None) -> None:
        self.settings = settings
        try:
            self._credentials = load_credentials(settings.credentials_file)
        except CredentialsError as error:
            raise RedfishError(str(error)) from None
        own = time.monotonic() + settings.read_deadline_s
        self.deadline = own if deadline is None else min(deadline, own)
        self._tls = tls or tls_context(settings)
        self._where = f"{settings.host}:{settings.port}"
        self._base = URL.build(scheme="https", host=settings.host, port=settings.port)
        self._http: aiohttp.ClientSession | None = None
        self._session: str | None = None  # the session's path, for the logout
        self._read_bytes = 0  # the answers' bodies so far, against MAX_READ_BYTES

    async def __aenter__(self) -> RedfishClient:
        # identity: a compressed answer would pass the byte bounds before it is unpacked
        self._http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=self._tls, limit=1), auto_decompress=False,
            headers={"Accept": "application/json", "Accept-Encoding": "identity"})
        try:
            await self._login()
        except BaseException as error:
            await self.__aexit__(type(error), error, None)
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Log out (best effort: a failure is logged, not raised) and close the connection;
        a read cancelled (``/probe``'s, at a reload) is past its deadline."""
        assert self._http is not None
        if isinstance(exc_info[1] if exc_info else None, asyncio.CancelledError):
            self.deadline = time.monotonic()
        try:
            if self._session is not None:
                status, _, _ = await self._request("DELETE", self._session, logout=True)
                if status not in (200, 202, 204):
                    log.warning("logout from %s: HTTP %d", self._where, status)
        except RedfishError as error:
            log.warning("logout failed: %s", error)
        finally:
            await self._http.close()

    async def get(self, path: str) -> dict | None:
        """The JSON object at ``path``, None when it does not exist (404); any other answer
        than 200 with a JSON object raises."""
        status, _, body = await self._request("GET", path)
        where = f"{self._where}: GET {path}"
        if status in (401, 403):
            raise RedfishError(f"{where} refused (HTTP {status}): check the user name, "
                               f"password and privileges in {self.settings.credentials_file}")
        if status == 404:
            return None
        if status != 200:
            raise RedfishError(f"{where}: HTTP {status}")
        # Hostile JSON is an answer that is not JSON too: an integer past the 4,300-digit
        # limit (ValueError) or nesting deeper than the parser recurses (RecursionError).
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            raise RedfishError(f"{where}: the answer is not JSON") from None
        if not isinstance(data, dict):
            raise RedfishError(f"{where}: the answer is not a JSON object")
        return data

    async def _login(self) -> None:
        """A session (its token sent with every request from now on), or basic auth where
        the service has no session service."""
        assert self._http is not None
        login = {"UserName": self._credentials.username, "Password": self._credentials.password}
        status, headers, _ = await self._request("POST", SESSIONS, json.dumps(login).encode())
        token = headers.get("X-Auth-Token")
        if status in (200, 201) and token:
            self._http.headers["X-Auth-Token"] = token
            location = headers.get("Location")
            self._session = urlsplit(location).path if location else None
            if location is None:
                log.warning("no session address from %s to log out; the iLO ends the session "
                            "when it times out", self._where)
        elif status in (401, 403):
            raise RedfishError(
                f"{self._where}: login refused (HTTP {status}): check the user name and "
                f"password in {self.settings.credentials_file}")
        elif status in (404, 405, 501) or 200 <= status < 300:
            log.info("%s offers no Redfish session (HTTP %d); using basic auth",
                     self._where, status)
            pair = f"{self._credentials.username}:{self._credentials.password}".encode()
            self._http.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        else:
            raise RedfishError(f"{self._where}: session login failed: HTTP {status}")

    async def _request(self, method: str, path: str, body: bytes | None = None,
                       logout: bool = False) -> Answer:
        """The answer, its body at most MAX_ANSWER_BYTES (and the read's answers together
        MAX_READ_BYTES), or RedfishError. The logout has LOGOUT_GRACE_S at most."""
        assert self._http is not None
        request = f"{method} {path}"
        headers = {"Content-Type": "application/json"} if body is not None else None
        total, limit = self.settings.read_timeout_s, "read_timeout_s"
        grace = max(self.deadline - time.monotonic(), LOGOUT_GRACE_S)
        if logout and total > grace:  # what the read has left, or LOGOUT_GRACE_S past it
            total, limit = grace, "the read's time and LOGOUT_GRACE_S"
        connect = min(self.settings.connect_timeout_s, total)
        deadline = asyncio.timeout_at(None if logout else self.deadline)
        try:
            async with deadline, self._http.request(
                    method, self._base.with_path(URL(path).path), data=body, headers=headers,
                    allow_redirects=False,
                    timeout=aiohttp.ClientTimeout(total=total, connect=connect)) as answer:
                data = bytearray()
                async for chunk in answer.content.iter_any():
                    data += chunk
                    if len(data) > MAX_ANSWER_BYTES:
                        break  # the connection is dropped with the rest of the answer
        except aiohttp.ConnectionTimeoutError:
            raise RedfishError(f"connecting to {self._where} timed out after {connect:g} s "
                               "(connect_timeout_s)") from None
        except aiohttp.ClientConnectorCertificateError as error:
            why = getattr(error.certificate_error, "verify_message", error)
            raise RedfishError(f"{self._where}: TLS certificate not trusted ({why}); set "
                               "ca_file to the CA (or the certificate) of the iLO") from None
        except aiohttp.ClientConnectorError as error:  # asyncio's text names no reason
            why = os.strerror(error.errno) if error.errno else str(error.os_error)
            raise RedfishError(f"cannot connect to {self._where}: {why}") from None
        except TimeoutError:  # the whole answer did not come in time, or the read's time is up
            raise RedfishError(f"{self._where}: " + (
                f"{request}: the read's time is up ({self.settings.read_deadline_s:g} s, "
                "read_deadline_s, or the probe's)" if deadline.expired() else
                f"no complete answer to {request} within {total:g} s ({limit})")) from None
        except aiohttp.ClientError as error:
            raise RedfishError(f"{self._where}: {request} failed: "
                               f"{str(error) or type(error).__name__}") from None
        self._read_bytes += len(data)
        if len(data) > MAX_ANSWER_BYTES:
            raise RedfishError(
                f"{self._where}: {request}: answer larger than 1 MiB (MAX_ANSWER_BYTES)")
        if self._read_bytes > MAX_READ_BYTES:
            raise RedfishError(
                f"{self._where}: {request}: the read's answers passed 2 MiB (MAX_READ_BYTES)")
        log.debug("%s %s: HTTP %d", self._where, request, answer.status)
        return answer.status, answer.headers, bytes(data)
