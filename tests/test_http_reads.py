"""How the endpoint reads requests: requests trickling in on several connections at once,
and many pipelined in one write, each answered in turn. A real ExporterServer on loopback,
in this process, serving a fixed body."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest

from smartarray_agent.exporter.server import ExporterServer
from smartarray_agent.exporter.webconfig import WebSecurity

BODY = b"smartarray_up 1\n" * 100


@pytest.fixture
def server() -> Iterator[ExporterServer]:
    running = ExporterServer(("127.0.0.1", 0), lambda compressed: BODY, WebSecurity())
    running.start()
    yield running
    running.stop()


def read_answers(sock: socket.socket, count: int) -> list[bytes]:
    """``count`` whole answers (each head says how long its body is)."""
    data = b""
    answers = []
    while len(answers) < count:
        received = sock.recv(65536)
        assert received, f"closed after {len(answers)} answers"
        data += received
        while b"\r\n\r\n" in data:
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            if len(rest) < length:
                break
            answers.append(head + b"\r\n\r\n" + rest[:length])
            data = rest[length:]
    assert not data, "more than was asked for"
    return answers


def test_requests_sent_a_byte_at_a_time_on_two_connections_are_not_mixed(server):
    """Each connection's bytes make its own request, however they interleave."""
    address = server.server_address[:2]
    metrics = b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
    healthy = b"GET /-/healthy HTTP/1.1\r\nHost: b\r\nX-Padding: " + b"p" * 40 + b"\r\n\r\n"
    with socket.create_connection(address, timeout=10) as first, \
            socket.create_connection(address, timeout=10) as second:
        for sock in (first, second):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(max(len(metrics), len(healthy))):
            first.sendall(metrics[i:i + 1])
            second.sendall(healthy[i:i + 1])
        assert read_answers(first, 1)[0].endswith(b"\r\n\r\n" + BODY)
        assert read_answers(second, 1)[0].endswith(b"\r\n\r\nOK\n")


def test_many_pipelined_requests_in_one_write_are_all_answered(server):
    request = b"GET /metrics HTTP/1.1\r\nHost: a\r\nAccept-Encoding: identity\r\n\r\n"
    count = 200  # 10 KB of requests in one write here
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        sock.sendall(request * count)
        answers = read_answers(sock, count)
    assert all(answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(BODY)
               for answer in answers)


def test_a_thousand_pipelined_small_requests_are_answered_in_turn(server, caplog):
    """Issue #31 item 1: a RecursionError killed the connection at ~250."""
    request = b"GET /-/healthy HTTP/1.1\r\nHost: a\r\n\r\n"
    count = 1000
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        sock.sendall(request * count)
        answers = read_answers(sock, count)
    assert all(answer.endswith(b"\r\n\r\nOK\n") for answer in answers)
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
