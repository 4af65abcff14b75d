"""The endpoint's time limits, connection cap and TLS, end to end on loopback: a real
ExporterServer in this process, the limits shortened through connection.py's constants.
Each test waits for the server to act (a closed connection, an answer), never a fixed time."""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from smartarray_agent.exporter import connection
from smartarray_agent.exporter.http import ExporterServer
from smartarray_agent.exporter.webconfig import WebSecurity

from .endpoint import BODY, start

TLS = Path(__file__).with_name("tls")
LIMIT_S = 0.5
GET = b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n"


def tls_security() -> WebSecurity:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(TLS / "server.crt", TLS / "server.key")
    return WebSecurity(tls=context)


def client_context() -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(TLS / "server.crt"))


@pytest.fixture
def short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("REQUEST_DEADLINE_S", "IDLE_TIMEOUT_S", "SEND_DEADLINE_S"):
        monkeypatch.setattr(connection, name, LIMIT_S)


@pytest.fixture
def server() -> Iterator[ExporterServer]:
    running = start()
    yield running
    running.stop()


def closed_after(sock: socket.socket, started: float) -> float:
    """Seconds from ``started`` until the server closes ``sock`` (reading what it sends)."""
    sock.settimeout(30)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def read_answer(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_an_idle_keep_alive_connection_is_closed_after_its_time(short_limits, server):
    with socket.create_connection(server.server_address[:2]) as sock:
        asked = time.monotonic()  # before the answer, after which the server starts counting
        sock.sendall(GET)
        assert read_answer(sock).endswith(BODY)
        assert LIMIT_S <= closed_after(sock, asked) < LIMIT_S + 5
    assert server.connections == 0


def test_a_request_that_never_completes_is_closed_after_its_time(short_limits, server):
    started = time.monotonic()  # before the accept, from which the server counts
    with socket.create_connection(server.server_address[:2]) as sock:
        sock.sendall(GET[:10])
        assert LIMIT_S <= closed_after(sock, started) < LIMIT_S + 5


def test_a_client_that_stops_reading_is_closed_after_its_time(short_limits):
    running = start(body=b"x" * 8_000_000)  # more than the socket buffers hold
    try:
        with socket.create_connection(running.server_address[:2]) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            started = time.monotonic()  # before the request, which starts the answer
            sock.sendall(GET)
            assert sock.recv(100).startswith(b"HTTP/1.1 200 OK")
            # Not reading: the server must give up on its own.
            deadline = time.monotonic() + 30
            while running.connections and time.monotonic() < deadline:
                time.sleep(0.05)
            assert running.connections == 0
            assert time.monotonic() - started >= LIMIT_S
    finally:
        running.stop()


def test_a_client_that_never_finishes_the_tls_handshake_is_closed(short_limits):
    running = start(tls_security())
    try:
        started = time.monotonic()  # before the accept, from which the server counts
        with socket.create_connection(running.server_address[:2]) as sock:
            sock.sendall(b"\x16\x03\x01")  # the start of a ClientHello, no more
            assert LIMIT_S <= closed_after(sock, started) < LIMIT_S + 5
    finally:
        running.stop()


def test_tls_keep_alive_pipelined_and_an_answer_larger_than_the_socket_buffers():
    big = b"y" * 3_000_000
    running = start(tls_security(), body=big)
    try:
        with socket.create_connection(running.server_address[:2]) as raw, \
                client_context().wrap_socket(raw, server_hostname="localhost") as sock:
            sock.sendall(GET + b"GET /-/healthy HTTP/1.1\r\n\r\n" + GET)
            answers = [read_answer(sock) for _ in range(3)]
        assert answers[0].endswith(big) and answers[2].endswith(big)
        assert answers[1].startswith(b"HTTP/1.1 200 OK") and answers[1].endswith(b"\r\n\r\nOK\n")
        conn = http.client.HTTPSConnection(*running.server_address[:2], timeout=30,
                                           context=client_context())
        conn.request("GET", "/metrics", headers={"Host": "localhost", "Connection": "close"})
        answer = conn.getresponse()
        assert (answer.status, answer.read() == big) == (200, True)
        conn.close()
    finally:
        running.stop()


def test_plain_http_on_the_tls_port_is_told_to_use_https():
    running = start(tls_security())
    try:
        with socket.create_connection(running.server_address[:2], timeout=10) as sock:
            sock.sendall(b"GET /metrics HTTP/1.1\r\n")
            sock.sendall(b"Host: t\r\n\r\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
        assert answer.endswith(b"\r\n\r\nthis port speaks HTTPS: use https://\n")
        # and the port still speaks TLS to the next client
        conn = http.client.HTTPSConnection(*running.server_address[:2], timeout=10,
                                           context=client_context())
        conn.request("GET", "/-/healthy", headers={"Host": "localhost"})
        assert conn.getresponse().read() == b"OK\n"
        conn.close()
    finally:
        running.stop()


def test_at_the_cap_a_new_connection_takes_the_place_of_the_oldest_waiting_one():
    running = start(max_connections=3)
    try:
        address = running.server_address[:2]
        kept = [socket.create_connection(address, timeout=10) for _ in range(3)]
        for sock in kept[1:]:
            sock.sendall(GET)  # answered: idle keep-alive connections from now on
            read_answer(sock)
        newest = socket.create_connection(address, timeout=10)
        newest.sendall(GET)
        assert read_answer(newest).endswith(BODY)
        # The one that never sent a request made room; the answered ones stay.
        assert kept[0].recv(10) == b""
        for sock in kept[1:]:
            sock.sendall(GET)
            assert read_answer(sock).endswith(BODY)
        for sock in (*kept, newest):
            sock.close()
    finally:
        running.stop()


def test_stop_closes_every_connection_and_the_port(server):
    address = server.server_address[:2]
    with socket.create_connection(address, timeout=10) as idle, \
            socket.create_connection(address, timeout=10) as half:
        half.sendall(GET[:5])
        idle.sendall(GET)
        read_answer(idle)
        server.stop()
        assert idle.recv(10) == b"" and half.recv(10) == b""
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=10).close()


def test_an_error_answering_one_request_is_logged_and_the_others_are_served(caplog):
    failing = {"once": True}

    def body(compressed: bool) -> bytes:
        if failing.pop("once", False):
            raise RuntimeError("a bug in the exposition")
        return BODY

    running = ExporterServer(("127.0.0.1", 0), body, WebSecurity())
    running.start()
    try:
        with socket.create_connection(running.server_address[:2], timeout=10) as sock:
            sock.sendall(GET)
            assert sock.recv(10) == b""  # that connection is closed, without an answer
        with socket.create_connection(running.server_address[:2], timeout=10) as sock:
            sock.sendall(GET)
            assert read_answer(sock).endswith(BODY)
    finally:
        running.stop()
    assert any(record.exc_info and "a bug in the exposition" in str(record.exc_info[1])
               for record in caplog.records)


def test_a_reload_that_turns_tls_off_applies_to_a_connection_that_sent_nothing_yet():
    running = start(tls_security())
    try:
        with socket.create_connection(running.server_address[:2], timeout=10) as sock:
            deadline = time.monotonic() + 10
            while running.connections == 0 and time.monotonic() < deadline:
                time.sleep(0.01)  # accepted while the port still spoke TLS
            assert running.connections == 1
            running.security = WebSecurity()  # what a SIGHUP with TLS removed sets
            sock.sendall(GET)
            assert read_answer(sock).endswith(BODY)
    finally:
        running.stop()


@pytest.mark.parametrize("unit", ["smartarray-agent.service", "smartarray-agent-serve.service"])
def test_the_units_file_limit_leaves_the_whole_connection_cap_and_the_docs_say_so(unit,
                                                                                 monkeypatch):
    """Issue 31 finding 7: 2,000 concurrent scrapes got 512 answers and 1,488 closes; the cap,
    the unit's LimitNOFILE and docs/privileges.md must tell the same story."""
    from smartarray_agent.exporter.http import FD_RESERVE, MAX_CONNECTIONS, connection_cap

    text = (Path(__file__).parents[1] / "systemd" / unit).read_text()
    [limit] = [int(line.split("=", 1)[1]) for line in text.splitlines()
               if line.startswith("LimitNOFILE=")]
    monkeypatch.setattr("resource.getrlimit", lambda which: (limit, limit))
    assert connection_cap() == MAX_CONNECTIONS
    assert limit >= MAX_CONNECTIONS + FD_RESERVE
    docs = " ".join((Path(__file__).parents[1] / "docs" / "privileges.md").read_text().split())
    for figure in (f"LimitNOFILE={limit}", f"{MAX_CONNECTIONS} connections",
                   f"{FD_RESERVE} descriptors", f"{limit - FD_RESERVE}"):
        assert figure in docs, figure
