"""The endpoint with TLS and basic auth (exporter-toolkit web config), and many scrapers at
once, against the agent's daemon on the simulator (in this process: the endpoint is the
subject, tests/agent_process.py)."""

from __future__ import annotations

import base64
import http.client
import ssl
import threading
from pathlib import Path

import bcrypt
import pytest

from .agent_process import AgentInProcess, simulated, value
from .secret_files import tls_files, write_secret

TLS = Path(__file__).with_name("tls")


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture
def secured_agent(tmp_path):
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode()
    cert, key = tls_files(tmp_path)
    write_secret(tmp_path / "web.yml", f"""\
tls_server_config:
  cert_file: {cert}
  key_file: {key}
basic_auth_users:
  prometheus: {hashed}
""")
    agent = AgentInProcess(tmp_path, simulated(tmp_path, "gen8-capacitor",
                                               '[web]\nconfig_file = "web.yml"\n')).start()
    yield agent
    agent.stop()


def test_tls_and_basic_auth(secured_agent):
    agent = secured_agent
    trusted = ssl.create_default_context(cafile=str(TLS / "server.crt"))
    assert agent.scheme == "https"
    assert agent.request("/metrics", context=trusted)[0] == 401
    status, headers, _ = agent.request("/", context=trusted, headers=basic("prometheus", "no"))
    assert status == 401 and headers["WWW-Authenticate"] == 'Basic realm="smartarray-agent"'
    assert agent.request("/-/healthy", context=trusted,
                         headers=basic("someone", "s3cret"))[0] == 401
    good = basic("prometheus", "s3cret")
    samples = agent.wait_for(
        lambda s: value(s, "smartarray_collector_success", collector="ssacli") == 1,
        context=trusted, headers=good)
    assert value(samples, "smartarray_backup_power_source", controller="0",
                 source="capacitors") == 1

    with pytest.raises(ssl.SSLCertVerificationError):
        agent.request("/metrics", context=ssl.create_default_context())
    # plain HTTP on the TLS port: a 4xx or the connection closed, never the metrics
    plain = http.client.HTTPConnection(agent.host, timeout=5)
    try:
        plain.request("GET", "/metrics")
        status: int | None = plain.getresponse().status
    except (http.client.HTTPException, ConnectionError):
        status = None
    finally:
        plain.close()
    assert status is None or 400 <= status < 500, status
    assert agent.request("/metrics", context=trusted, headers=good)[0] == 200


def test_fifty_concurrent_keep_alive_scrapers(tmp_path):
    agent = AgentInProcess(tmp_path, simulated(tmp_path, "two-controllers")).start()
    try:
        agent.wait_for(lambda s: value(s, "smartarray_collector_success", collector="ssacli"))
        statuses: list[int] = []
        lock = threading.Lock()

        def scraper() -> None:
            conn = http.client.HTTPConnection(agent.host, timeout=30)
            for _ in range(10):  # one connection, kept alive, as Prometheus does
                conn.request("GET", "/metrics")
                response = conn.getresponse()
                body = response.read()
                with lock:
                    statuses.append(response.status if b"controller=\"1\"" in body else 0)
            conn.close()

        threads = [threading.Thread(target=scraper) for _ in range(50)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert statuses == [200] * 500
    finally:
        agent.stop()
