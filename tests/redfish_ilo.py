"""A fake iLO for the Redfish tests: a real HTTPS server on 127.0.0.1 (port 0) in a thread.

It serves iLO 5- or iLO 4-shaped resources (shapes and values from HPE's iLO Redfish
reference and real answers), or a whole iLO 5 or iLO 6 tree from tests/redfish_data/; it has
a session service that records every login and logout, checks the session token or basic
auth on every GET, and injects faults: a delay, a hang, a forced status, a body that is not
JSON, no session service, an answer that drips a byte at a time.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import secrets
import socket
import ssl
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

USER = "monitor"
PASSWORD = "Pa55-w0rd-never-logged"
SESSIONS = "/redfish/v1/SessionService/Sessions/"
CHASSIS = "/redfish/v1/Chassis/1/"
SYSTEM = "/redfish/v1/Systems/1/"
CONTROLLERS = "/redfish/v1/Systems/1/SmartStorage/ArrayControllers/"

# the simulator's gen10 scenario prints this controller
GEN10_SERIAL = "PSIMXP408IA001"
GEN10_MODEL = "HPE Smart Array P408i-a SR Gen10"

# Whole resource trees of one iLO each (tests/redfish_data/README.md says where they come from)
DATA = Path(__file__).resolve().parent / "redfish_data"
ILO5_TREE = "ilo5-p408i-a-gen10"  # the host of the simulator's gen10 scenario, seen by iLO 5
ILO6_TREE = "ilo6-mr408i-o-gen11"  # a Gen11 with the DMTF Storage model only
ILO4_TREE = "ilo4-p244br-gen9"  # iLO 4 2.x: links in both forms (public test data)
ILO4_HAL_TREE = "ilo4-p830i-gen9-hal"  # iLO 4 in the HAL form alone (a user's paste)
ILO5_CONTROLLER = CONTROLLERS + "0/"


def tree(name: str) -> dict[str, dict]:
    """A fresh copy of a resource tree: path -> JSON object, as the iLO serves it (the
    file's ``_source`` header, where it has one, left out)."""
    documents = json.loads((DATA / f"{name}.json").read_text())
    return {path: doc for path, doc in documents.items() if not path.startswith("_")}


@functools.cache
def certificate() -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made once per test run."""
    folder = Path(tempfile.mkdtemp(prefix="fake-ilo-tls-"))
    cert, key = folder / "ilo.pem", folder / "ilo.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=fake iLO", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=30,
    )
    return cert, key


def battery_ilo5(
    charge: int | None = 99, health: str = "OK", remaining_s: int = 0, index: int = 1,
    **extra: object,
) -> dict:
    return {
        "ChargeLevelPercent": charge,
        "FirmwareVersion": "0.70",
        "Index": index,
        "MaximumCapWatts": 96,
        "Model": "875241-B21",
        "ProductName": "HPE Smart Storage Battery ",
        "RemainingChargeTimeSeconds": remaining_s,
        "SerialNumber": f"6WQXK0JWYF44{index}K",
        "SparePartNumber": "878643-001",
        "Status": {"Health": health, "State": "Enabled"},
        **extra,
    }


def controller(
    ident: str = "0", slot: str = "0", serial: str = GEN10_SERIAL, model: str = GEN10_MODEL,
    backup: str = "Present",
) -> dict:
    return {
        "@odata.id": f"{CONTROLLERS}{ident}/",
        "AdapterType": "SmartArray",
        "BackupPowerSourceStatus": backup,
        "CacheMemorySizeMiB": 2048,
        "CacheModuleStatus": {"Health": "OK"},
        "Id": ident,
        "Location": f"Slot {slot}",
        "LocationFormat": "PCISlot",
        "Model": model,
        "SerialNumber": serial + " ",  # the iLO pads serial numbers
        "Status": {"Health": "OK", "State": "Enabled"},
    }


def ilo5(batteries: list[dict] | None = None, controllers: list[dict] | None = None) -> dict:
    """iLO 5 resources: batteries in Chassis/1 Oem.Hpe, controllers under SmartStorage."""
    chassis_oem = {"MCTPEnabledOnServer": True}
    chassis_oem["SmartStorageBattery"] = [battery_ilo5()] if batteries is None else batteries
    return {
        CHASSIS: {"@odata.id": CHASSIS, "Id": "1", "Oem": {"Hpe": chassis_oem}},
        SYSTEM: {"@odata.id": SYSTEM, "Id": "1", "Oem": {"Hpe": {"PostState": "FinishedPost"}}},
        **_controllers([controller()] if controllers is None else controllers),
    }


def ilo5_without_oem() -> dict:
    resources = ilo5()
    resources[CHASSIS] = {"@odata.id": CHASSIS, "Id": "1", "Name": "Computer System Chassis"}
    resources[SYSTEM] = {"@odata.id": SYSTEM, "Id": "1"}
    return resources


def ilo4() -> dict:
    """iLO 4 (Gen9): batteries in Systems/1 Oem.Hp.Battery, no charge."""
    battery = {
        "Condition": "Ok", "ErrorCode": 0, "FirmwareVersion": "1.3", "Index": 1,
        "MaxCapWatts": 12, "Model": "727261-B21", "Present": "Yes",
        "ProductName": "HPE Smart Storage Battery ", "SerialNumber": "6EZBP0GB2190JM",
        "Spare": "815984-001",
    }
    return {
        CHASSIS: {"@odata.id": CHASSIS, "Id": "1", "Oem": {"Hp": {"BayNumber": 1}}},
        SYSTEM: {"@odata.id": SYSTEM, "Id": "1", "Oem": {"Hp": {"Battery": [battery]}}},
        **_controllers([controller(serial="PDNLH0BRH8Q1GK", model="Smart Array P440ar")]),
    }


def _controllers(items: list[dict]) -> dict:
    resources = {CONTROLLERS: {"Members": [{"@odata.id": c["@odata.id"]} for c in items]}}
    resources.update({c["@odata.id"]: c for c in items})
    return resources


@dataclass
class Ilo:
    resources: dict[str, dict]
    sessions: bool = True  # False: no session service (POST answers 404)
    delay_s: dict[str, float] = field(default_factory=dict)
    hang: set[str] = field(default_factory=set)
    status: dict[str, int] = field(default_factory=dict)
    raw: dict[str, bytes] = field(default_factory=dict)
    # path -> seconds between bytes: the whole answer, head and body, sent a byte at a time
    drip: dict[str, float] = field(default_factory=dict)
    # path -> (answers given normally, status of every later answer): an iLO that stops
    # answering part-way through a command
    fail_after: dict[str, tuple[int, int]] = field(default_factory=dict)
    # what happened
    logins: list[str] = field(default_factory=list)  # session ids
    logouts: list[str] = field(default_factory=list)
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # method, path, auth
    connections: int = 0  # TCP connections accepted, with or without a request
    release: threading.Event = field(default_factory=threading.Event)
    hanging: threading.Event = field(default_factory=threading.Event)  # a request hangs now
    _tokens: dict[str, str] = field(default_factory=dict)  # token -> session id
    address: str = ""

    def authenticated(self, headers) -> str | None:
        token = headers.get("X-Auth-Token")
        if token is not None:
            return "session" if token in self._tokens else None
        basic = headers.get("Authorization", "")
        if basic.startswith("Basic "):
            pair = base64.b64decode(basic[6:]).decode()
            return "basic" if pair == f"{USER}:{PASSWORD}" else None
        return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the iLO
    timeout = 10
    server: _Server

    def setup(self) -> None:
        self.request.do_handshake()
        super().setup()

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        ilo = self.server.ilo
        auth = ilo.authenticated(self.headers)
        ilo.requests.append(("GET", self.path, auth or "none"))
        if self.path in ilo.hang:
            ilo.hanging.set()
            ilo.release.wait(30)
            self.close_connection = True
            return
        if self.path in ilo.delay_s:
            ilo.release.wait(ilo.delay_s[self.path])
        if auth is None:
            return self._json(401, {"error": {"code": "iLO.0.10.ExtendedInfo"}})
        answered = sum(1 for method, path, _ in ilo.requests if path == self.path) - 1
        if self.path in ilo.fail_after and answered >= ilo.fail_after[self.path][0]:
            return self._json(ilo.fail_after[self.path][1], {"error": {"code": "Base.1.0.Error"}})
        if self.path in ilo.status:
            return self._json(ilo.status[self.path], {"error": {"code": "Base.1.0.Error"}})
        if self.path in ilo.raw:
            return self._send(200, ilo.raw[self.path], "text/html")
        if self.path not in ilo.resources:
            return self._json(404, {"error": {"code": "Base.1.0.ResourceMissingAtURI"}})
        if self.path in ilo.drip:
            return self._drip(ilo, json.dumps(ilo.resources[self.path]).encode())
        self._json(200, ilo.resources[self.path])

    def _drip(self, ilo: Ilo, body: bytes) -> None:
        """Each byte of the answer on its own, ``drip`` seconds apart, until the client
        leaves or the test ends."""
        answer = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        ilo.hanging.set()
        for byte in answer:
            try:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            except OSError:
                return
            if ilo.release.wait(ilo.drip[self.path]):
                return
        self.close_connection = True

    def do_POST(self) -> None:
        ilo = self.server.ilo
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        ilo.requests.append(("POST", self.path, "none"))
        if self.path != SESSIONS or not ilo.sessions:
            return self._json(404, {"error": {"code": "Base.1.0.ResourceMissingAtURI"}})
        login = json.loads(body)
        if (login.get("UserName"), login.get("Password")) != (USER, PASSWORD):
            return self._json(401, {"error": {"code": "Base.1.0.NoValidSession"}})
        session = f"{USER}{len(ilo.logins):04d}"
        token = secrets.token_hex(16)
        ilo._tokens[token] = session
        ilo.logins.append(session)
        self._json(201, {"Id": session}, {
            "X-Auth-Token": token,
            "Location": f"https://{ilo.address}{SESSIONS}{session}/",
        })

    def do_DELETE(self) -> None:
        ilo = self.server.ilo
        ilo.requests.append(("DELETE", self.path, ilo.authenticated(self.headers) or "none"))
        token = self.headers.get("X-Auth-Token", "")
        session = ilo._tokens.get(token)
        if session is None or self.path != f"{SESSIONS}{session}/":
            return self._json(401, {"error": {"code": "Base.1.0.NoValidSession"}})
        del ilo._tokens[token]
        ilo.logouts.append(session)
        self._json(200, {})

    def _json(self, status: int, data: dict, headers: dict | None = None) -> None:
        self._send(status, json.dumps(data).encode(), "application/json", headers)

    def _send(self, status: int, body: bytes, kind: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, ilo: Ilo, tls: ssl.SSLContext) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.ilo = ilo
        self.tls = tls

    def get_request(self):
        sock, peer = self.socket.accept()
        self.ilo.connections += 1
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle delay per answer
        return self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), peer

    def handle_error(self, request, client_address) -> None:
        pass  # a client that gives up (timeout, untrusted certificate) is expected here


@contextmanager
def serve(ilo: Ilo) -> Iterator[Ilo]:
    """Run ``ilo`` on 127.0.0.1; ``ilo.address`` is its ``host:port``."""
    cert, key = certificate()
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server = _Server(ilo, tls)
    ilo.address = f"127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield ilo
    finally:
        ilo.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def silent_listener() -> Iterator[str]:
    """A TCP port that accepts connections and never says a word (a TLS handshake hangs)."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for sock in accepted:
            sock.close()
        listener.close()


def credentials_file(folder: Path, password: str = PASSWORD, mode: int = 0o600) -> Path:
    path = folder / "ilo-credentials.toml"
    path.write_text(f'username = "{USER}"\npassword = "{password}"\n')
    os.chmod(path, mode)
    return path


def closed_port() -> str:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"
