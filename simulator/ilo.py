"""A simulated host's iLO: a Redfish service over HTTPS on 127.0.0.1 serving what
simulator/redfish.py makes of the host's state (``smartarray-agent simulate ilo``). The state
is the one the simulated CLI changes (simulator/state.py), read at each request and rendered
again when its file or the scenario's changed or a battery-timeline step came due. Logins as
an iLO does them (HPE's iLO 5 Redfish reference, "Authentication and Sessions"): a session
(``POST`` of ``UserName`` and ``Password`` to the Sessions collection: 201, ``X-Auth-Token``
and the session's ``Location``, ended by a ``DELETE`` there) or HTTP basic auth; without
either only ``/redfish/v1/`` answers, every other resource 401 ``NoValidSession``.

Many iLOs, one process: :func:`start` listens on ``count`` consecutive ports of 127.0.0.1 from
``port`` (one event loop and aiohttp runner, a site per port), each port one simulated iLO of
the host with sessions of its own. A fleet (``/probe`` at 2,000 iLOs) is addressed one target
per port, ``127.0.0.1:PORT``: ``[probe] targets = ["127.0.0.1:*"]`` admits them all, and the
one certificate, which names 127.0.0.1, verifies every port through one ``ca_file``. Each
listener holds a descriptor (``ulimit -n`` above 2,000 plus the connections open at once).
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import random
import secrets
import signal
import ssl
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from aiohttp import web

from smartarray_agent.simulator.faults import at_time, effective_faults
from smartarray_agent.simulator.redfish import ROOT, SESSIONS, documents
from smartarray_agent.simulator.scenario import Scenario
from smartarray_agent.simulator.state import StateStore

USERNAME = "Administrator"


class SimulatedIlo:
    """The Redfish service of the host whose state ``store`` keeps, in ``form``
    (simulator/redfish.py's ``FORMS``), with the login ``username``, ``password``."""

    def __init__(self, store: StateStore, form: str, password: str,
                 delay: tuple[float, float] = (0.0, 0.0)) -> None:
        self.store, self.form, self.delay = store, form, delay
        self._basic = "Basic " + base64.b64encode(f"{USERNAME}:{password}".encode()).decode()
        self._password = password
        self.sessions: dict[str, tuple[int, str]] = {}  # token -> (port, the session's path)
        self.logins = 0
        self._state: tuple[object, Scenario, float] | None = None  # (files, state, created)
        self._rendered: tuple[object, dict[str, dict]] | None = None
        self.documents()  # a scenario that does not validate fails here, before serving

    def documents(self) -> dict[str, dict]:
        """The documents of the host as its state stands now."""
        files = [path.stat() if path.exists() else None
                 for path in (self.store.state_file, self.store.scenario_path)]
        key = [(f.st_ino, f.st_mtime_ns) if f else None for f in files]
        if self._state is None or self._state[0] != key:
            self._state = (key, *self.store.load())
        _, scenario, created = self._state
        faults, elapsed = effective_faults(scenario), time.time() - created
        version = (key, sum(step.after_s <= elapsed for step in faults.battery_timeline))
        if self._rendered is None or self._rendered[0] != version:
            self._rendered = (version, documents(at_time(scenario, faults, elapsed), self.form))
        return self._rendered[1]

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._answer)
        return app

    async def _answer(self, request: web.Request) -> web.Response:
        if self.delay[1] > 0:
            await asyncio.sleep(random.uniform(*self.delay))
        assert request.transport is not None
        port = request.transport.get_extra_info("sockname")[1]
        path = request.path.rstrip("/") + "/"
        if request.method == "POST" and path == SESSIONS:
            return await self._login(request, port)
        if path != ROOT and not self._authorized(request, port):
            return _error(401, "Base.1.4.NoValidSession")
        if request.method == "DELETE":
            return self._logout(request, path)
        if request.method != "GET":
            return _error(405, "Base.1.4.OperationNotAllowed")
        found = self.documents().get(path)
        return _error(404, "Base.1.4.ResourceMissingAtURI") if found is None else \
            web.json_response(found)

    async def _login(self, request: web.Request, port: int) -> web.Response:
        try:
            login = await request.json()
        except ValueError:
            return _error(400, "Base.1.4.MalformedJSON")
        if not isinstance(login, dict) or (login.get("UserName"), login.get("Password")) != (
                USERNAME, self._password):
            return _error(401, "Base.1.4.NoValidSession")
        self.logins += 1
        token, session = secrets.token_hex(16), f"{SESSIONS}{USERNAME.lower()}{self.logins:08x}/"
        self.sessions[token] = (port, session)
        return web.json_response(
            {"@odata.id": session, "Id": session.split("/")[-2], "UserName": USERNAME},
            status=201, headers={"X-Auth-Token": token,
                                 "Location": f"https://{request.host}{session}"})

    def _authorized(self, request: web.Request, port: int) -> bool:
        token = request.headers.get("X-Auth-Token")
        if token is not None:
            return self.sessions.get(token, (None,))[0] == port
        return secrets.compare_digest(request.headers.get("Authorization", ""), self._basic)

    def _logout(self, request: web.Request, path: str) -> web.Response:
        token = request.headers.get("X-Auth-Token", "")
        if self.sessions.get(token, (None, None))[1] != path:
            return _error(404, "Base.1.4.ResourceMissingAtURI")
        del self.sessions[token]
        return web.json_response({}, status=200)


def _error(status: int, message_id: str) -> web.Response:
    """An error as iLO 5 answers it: its ``iLO.0.10.ExtendedInfo`` with the message id."""
    return web.json_response({"error": {
        "code": "iLO.0.10.ExtendedInfo",
        "message": "See @Message.ExtendedInfo for more information.",
        "@Message.ExtendedInfo": [{"MessageId": message_id}]}}, status=status)


def certificate(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A self-signed certificate for 127.0.0.1 and localhost (EC P-256, valid 30 days), made
    now in ``folder`` (``ilo.pem``, its key ``ilo.key`` 0600), and the server's TLS context
    with it. It is its own CA: ``ca_file = ilo.pem`` trusts it, the host name checked."""
    from cryptography import x509  # here: only the simulated iLO needs it (extra "simulate")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "simulated iLO")])
    now = datetime.now(UTC)
    public = key.public_key()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([
                x509.IPAddress(ipaddress.IPv4Address("127.0.0.1")), x509.DNSName("localhost")]),
                critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = folder / "ilo.pem", folder / "ilo.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.touch(mode=0o600)
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return cert_file, context


async def start(ilo: SimulatedIlo, tls: ssl.SSLContext, port: int,
                count: int) -> web.AppRunner:
    """``ilo`` listening on ``count`` ports of 127.0.0.1 from ``port`` (0: free ports);
    ``runner.addresses`` are where."""
    runner = web.AppRunner(ilo.app(), access_log=None)
    await runner.setup()
    for offset in range(count):
        await web.TCPSite(runner, "127.0.0.1", port + offset if port else 0,
                          ssl_context=tls).start()
    return runner


def serve(ilo: SimulatedIlo, tls: ssl.SSLContext, port: int, count: int,
          started: Callable[[list[str]], None]) -> None:
    """Serve ``ilo`` as :func:`start` does until SIGINT or SIGTERM; ``started`` gets each
    listener's ``host:port`` once they all listen."""

    async def run() -> None:
        runner = await start(ilo, tls, port, count)
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        try:
            started([f"{host}:{bound}" for host, bound, *_ in runner.addresses])
            await stop.wait()
        finally:
            await runner.cleanup()

    asyncio.run(run())
