"""systemd notify by hand: datagrams to $NOTIFY_SOCKET, from the agent as systemd sees it."""

from __future__ import annotations

import os
import socket
import uuid

import pytest

from smartarray_agent.daemon.notify import Notifier

from .agent_process import AgentProcess, scenario_file


@pytest.fixture
def listener(tmp_path):
    """A datagram socket standing in for systemd: (its $NOTIFY_SOCKET value, receive())."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify.sock"
    sock.bind(str(path))
    yield str(path), _receiver(sock)
    sock.close()


def _receiver(sock):
    def receive(timeout_s: float = 20.0) -> dict[str, str] | None:
        sock.settimeout(timeout_s)
        try:
            data = sock.recv(4096)
        except TimeoutError:
            return None
        return dict(line.split("=", 1) for line in data.decode().splitlines())

    return receive


def test_messages_reach_a_path_socket(listener):
    address, receive = listener
    notifier = Notifier(address, watchdog_interval_s=10)
    assert notifier.ready("serving")
    assert receive() == {"READY": "1", "STATUS": "serving"}
    assert notifier.watchdog()
    assert receive() == {"WATCHDOG": "1"}
    assert notifier.stopping()
    assert receive() == {"STOPPING": "1", "STATUS": "stopping"}
    assert notifier.reloading()
    message = receive()
    assert message["RELOADING"] == "1"
    assert int(message["MONOTONIC_USEC"]) > 0


def test_messages_reach_an_abstract_socket():
    name = f"smartarray-agent-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        assert Notifier("@" + name).status("collecting")
        sock.settimeout(5)
        assert sock.recv(4096) == b"STATUS=collecting"


def test_outside_systemd_nothing_is_sent_and_nothing_fails(tmp_path):
    assert not Notifier(None).ready("x")
    gone = Notifier(str(tmp_path / "no-such-socket"), watchdog_interval_s=1)
    assert not gone.watchdog()  # logged once, never raised


def test_the_environment_is_read_once_and_cleared_for_children():
    environ = {"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "30000000",
               "WATCHDOG_PID": str(os.getpid()), "PATH": "/bin"}
    notifier = Notifier.from_environment(environ)
    assert notifier.watchdog_interval_s == 30.0
    assert environ == {"PATH": "/bin"}
    other = Notifier.from_environment({"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "30000000",
                                       "WATCHDOG_PID": "1"})
    assert other.watchdog_interval_s is None  # the watchdog is another process's


def _agent_config(tmp_path, scenario, timeout_s=60, interval_s=1) -> str:
    return f"""
[ssacli]
simulate = "{scenario}"
lock_file = "{tmp_path}/cli.lock"
timeout_s = {timeout_s}
[collect]
interval_s = {interval_s}
[sysfs]
enabled = false
"""


def test_the_agent_is_ready_after_its_first_collection_pings_and_says_stopping(
    tmp_path, listener
):
    address, receive = listener
    scenario = scenario_file(tmp_path, "recharging")
    agent = AgentProcess(tmp_path, _agent_config(tmp_path, scenario, interval_s=3600),
                         env={"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "400000"}).start()
    try:
        messages = _until(receive, lambda m: "READY" in m)
        assert "WATCHDOG" not in {key for m in messages for key in m}
        assert messages[-1]["STATUS"].startswith("ssacli ok: 1 controller in ")
        pings = _until(receive, lambda m: "WATCHDOG" in m)
        assert pings[-1] == {"WATCHDOG": "1"}
        agent.signal(15)
        stopping = _until(receive, lambda m: "STOPPING" in m)
        assert stopping[-1]["STATUS"] == "stopping"
        assert agent.process.wait(10) == 0
    finally:
        agent.kill()


def test_a_stuck_collection_sends_no_watchdog_ping(tmp_path, listener):
    address, receive = listener
    scenario = scenario_file(tmp_path, "gen9-battery", {"hang": ["*"]})
    agent = AgentProcess(tmp_path, _agent_config(tmp_path, scenario, timeout_s=2),
                         env={"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "400000"}).start()
    try:
        messages = _until(receive, lambda m: "READY" in m)
        # The first round: the CLI hung until its 2 s timeout, and no ping meanwhile.
        assert "ssacli failed: " in messages[-1]["STATUS"]
        assert "did not finish in 2 s" in messages[-1]["STATUS"]
        assert all("WATCHDOG" not in m for m in messages)
        assert agent.stop()[0] == 0  # and the next hung collection is ended with it
    finally:
        agent.kill()


def _until(receive, condition) -> list[dict[str, str]]:
    messages = []
    while True:
        message = receive()
        assert message is not None, f"no notify message; got {messages}"
        messages.append(message)
        if condition(message):
            return messages
