"""The simulated iLO (``simulate ilo``: simulator/ilo.py serving simulator/redfish.py's
documents): an iLO's logins, both forms as the agent's own Redfish reader reads them, the
charge from the simulated host's state, the interlock through it, many iLOs in one process,
and the README's lines. The service runs in this process, on a thread's event loop; only the
README's ``simulate ilo`` line runs as a process (the process, its start and what it prints
and writes, is the subject there)."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import os
import re
import shlex
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from smartarray_agent.collectors.redfish.crawl import read_ilo
from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.collectors.redfish.snapshot import snapshot_from
from smartarray_agent.common.model import Snapshot
from smartarray_agent.config import load_config
from smartarray_agent.probe.prober import Prober
from smartarray_agent.simulator import BUNDLED, resolve_scenario
from smartarray_agent.simulator.ilo import USERNAME, SimulatedIlo, certificate, start
from smartarray_agent.simulator.redfish import CHASSIS, ROOT, SESSIONS, documents
from smartarray_agent.simulator.scenario import load_scenario
from smartarray_agent.simulator.state import StateStore

from .agent_cli import agent
from .redfish_ilo import closed_port
from .test_probe import endpoint, get, samples, value

ROOT_DIR = Path(__file__).resolve().parent.parent
PASSWORD = "simulated-Pa55"


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> tuple[Path, ssl.SSLContext]:
    return certificate(tmp_path_factory.mktemp("tls"))


@contextmanager
def running(tmp_path: Path, tls: tuple[Path, ssl.SSLContext], scenario: str = "gen10",
            form: str = "smartstorage", count: int = 1) -> Iterator[tuple[SimulatedIlo, list[str]]]:
    """The simulated iLO of ``scenario``'s host (state in ``tmp_path/sim``, as
    ``SMARTARRAY_SIM_STATE_DIR`` names it to the commands) on ``count`` free ports."""
    store = StateStore(tmp_path / "sim", resolve_scenario(scenario))
    ilo = SimulatedIlo(store, form, PASSWORD)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner = asyncio.run_coroutine_threadsafe(
        start(ilo, tls[1], 0, count), loop).result(30)
    try:
        yield ilo, [f"{host}:{port}" for host, port, *_ in runner.addresses]
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


def request(address: str, cert: Path, method: str, path: str, headers: dict | None = None,
            body: dict | None = None) -> tuple[int, http.client.HTTPMessage, dict]:
    """One HTTPS request, the certificate verified and its host name checked, strictly, as
    Python 3.13's default context does (VERIFY_X509_STRICT)."""
    host, port = address.rsplit(":", 1)
    context = ssl.create_default_context(cafile=cert)
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    connection = http.client.HTTPSConnection(host, int(port), timeout=30, context=context)
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body),
                           headers={"Content-Type": "application/json", **(headers or {})})
        answer = connection.getresponse()
        return answer.status, answer.headers, json.loads(answer.read() or b"{}")
    finally:
        connection.close()


def credentials(folder: Path) -> Path:
    path = folder / "ilo-credentials.toml"
    path.write_text(f'username = "{USERNAME}"\npassword = "{PASSWORD}"\n')
    path.chmod(0o600)
    return path


def settings(tmp_path: Path, address: str, cert: Path) -> RedfishSettings:
    return RedfishSettings(address=address, credentials_file=credentials(tmp_path),
                           ca_file=cert)


def message_id(answer: dict) -> str:
    return answer["error"]["@Message.ExtendedInfo"][0]["MessageId"]


def test_a_session_login_gives_a_token_to_read_with_and_a_location_to_log_out(
        tmp_path, tls):
    cert = tls[0]
    with running(tmp_path, tls) as (ilo, (address,)):
        status, headers, _ = request(address, cert, "POST", SESSIONS,
                                     body={"UserName": USERNAME, "Password": PASSWORD})
        assert status == 201
        token, location = headers["X-Auth-Token"], headers["Location"]
        assert location.startswith(f"https://{address}{SESSIONS}")
        status, _, chassis = request(address, cert, "GET", CHASSIS, {"X-Auth-Token": token})
        assert status == 200 and chassis["Oem"]["Hpe"]["SmartStorageBattery"]
        session = location.split(address, 1)[1]
        assert request(address, cert, "DELETE", session, {"X-Auth-Token": token})[0] == 200
        status, _, answer = request(address, cert, "GET", CHASSIS, {"X-Auth-Token": token})
        assert (status, message_id(answer)) == (401, "Base.1.4.NoValidSession")
        assert not ilo.sessions


def test_without_a_login_only_the_service_root_answers_and_basic_auth_is_a_login(
        tmp_path, tls):
    cert = tls[0]

    def basic(password: str) -> dict:
        pair = base64.b64encode(f"{USERNAME}:{password}".encode()).decode()
        return {"Authorization": f"Basic {pair}"}

    with running(tmp_path, tls) as (_, (address,)):
        assert request(address, cert, "GET", ROOT)[0] == 200
        assert request(address, cert, "GET", CHASSIS)[0] == 401
        assert request(address, cert, "POST", SESSIONS,
                       body={"UserName": USERNAME, "Password": "wrong"})[0] == 401
        assert request(address, cert, "GET", CHASSIS, basic("wrong"))[0] == 401
        assert request(address, cert, "GET", "/redfish/v1/Chassis/1", basic(PASSWORD))[0] == 200
        status, _, answer = request(address, cert, "GET", "/redfish/v1/Nothing/",
                                    basic(PASSWORD))
        assert (status, message_id(answer)) == (404, "Base.1.4.ResourceMissingAtURI")


def test_one_process_is_many_ilos_each_port_one_with_sessions_of_its_own(tmp_path, tls):
    cert = tls[0]
    with running(tmp_path, tls, count=20) as (_, addresses):
        assert len(set(addresses)) == 20
        tokens = [request(a, cert, "POST", SESSIONS,
                          body={"UserName": USERNAME, "Password": PASSWORD})[1]["X-Auth-Token"]
                  for a in addresses]
        assert all(request(a, cert, "GET", CHASSIS, {"X-Auth-Token": t})[0] == 200
                   for a, t in zip(addresses, tokens, strict=True))
        # a session of one iLO is none of another's
        assert request(addresses[1], cert, "GET", CHASSIS, {"X-Auth-Token": tokens[0]})[0] == 401


@pytest.mark.parametrize("form", ["smartstorage", "dmtf"])
def test_the_agents_reader_reads_the_scenarios_host_in_either_form(tmp_path, tls, form):
    with running(tmp_path, tls, "two-controllers", form) as (ilo, (address,)):
        snapshot = asyncio.run(read_ilo(settings(tmp_path, address, tls[0])))
        assert ilo.logins == 1 and not ilo.sessions  # logged in once, and out again
    assert [(c.slot, c.model, c.serial) for c in snapshot.controllers] == [
        ("0", "Smart Array P440ar", "PSIM9TWOCTRL00"), ("1", "Smart Array P840", "PSIM9TWOCTRL01")]
    assert all(c.cache.present and c.cache.size_bytes for c in snapshot.controllers)
    assert [len(c.physical_drives) for c in snapshot.controllers] == [2, 4]
    assert [len(c.logical_drives) for c in snapshot.controllers] == [1, 1]
    assert all(d.status == "ok" for c in snapshot.controllers for d in c.physical_drives)


@pytest.mark.parametrize("path", sorted(BUNDLED.glob("*.toml")), ids=lambda path: path.stem)
def test_both_forms_describe_the_same_host(path):
    """What iLO 5's form and the DMTF form both say of every bundled scenario's host, as the
    agent reads them, is the same: controllers, cache, drives (the DMTF drive's port, box
    and bay from its location label), volumes; the battery backs a controller in iLO 5's form
    only where it is the one battery, and is shown unassigned in the DMTF form."""
    scenario = load_scenario(path)
    ilo5, dmtf = (snapshot_from(documents(scenario, form), "x") for form in ("smartstorage",
                                                                            "dmtf"))

    def mib(size: int | None) -> int | None:  # iLO 5 gives sizes in MiB, DMTF in bytes
        return None if size is None else round(size / 2**20)

    def facts(snapshot: Snapshot) -> list:
        return [((c.slot, c.model, c.serial, c.firmware, c.status, c.cache.present,
                  c.cache.status, c.cache.size_bytes),
                 [(d.port, d.box, d.bay, mib(d.size_bytes), d.status, d.firmware)
                  for d in c.physical_drives],
                 [(mib(d.size_bytes), d.raid, d.status) for d in c.logical_drives])
                for c in snapshot.controllers]

    assert facts(ilo5) == facts(dmtf)
    assert len(dmtf.controllers) == len(scenario.controllers)
    charges = [b.charge_percent for b in dmtf.unassigned_batteries]
    assert charges == [100.0 if c.backup_power.status == "OK" else 0.0
                       for c in scenario.controllers if c.backup_power.source == "Batteries"]
    assert all(c.backup_power.charge_percent is None for c in dmtf.controllers)


def test_the_charge_is_the_simulated_hosts_state_at_the_next_read(tmp_path, tls):
    env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim")}
    with running(tmp_path, tls) as (_, (address,)):
        read = settings(tmp_path, address, tls[0])
        assert asyncio.run(read_ilo(read)).controllers[0].backup_power.charge_percent == 100
        assert agent("simulate", "charge", "gen10", "40", env=env).returncode == 0
        assert asyncio.run(read_ilo(read)).controllers[0].backup_power.charge_percent == 40
        assert agent("simulate", "reset", "gen10", env=env).returncode == 0
        assert asyncio.run(read_ilo(read)).controllers[0].backup_power.charge_percent == 100


def test_the_interlock_refuses_at_a_low_charge_and_allows_at_a_high_one_through_the_ilo(
        tmp_path, tls):
    """The CLI simulator says the battery is OK throughout: only the iLO's charge refuses."""
    env = {**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim")}
    with running(tmp_path, tls) as (ilo, (address,)):
        config = tmp_path / "config.toml"
        config.write_text(f'[redfish]\naddress = "{address}"\n'
                          f'credentials_file = "{credentials(tmp_path)}"\n'
                          f'ca_file = "{tls[0]}"\n'
                          f'[audit]\nfile = "{tmp_path / "audit.jsonl"}"\n')
        enable = ("write-cache", "enable", "--what", "no-battery", "--slot", "0", "--yes",
                  "--simulate", "gen10", "--config", str(config),
                  "--lock-file", str(tmp_path / "cli.lock"))
        agent("simulate", "charge", "gen10", "40", env=env)
        refused = agent(*enable, env=env)
        assert refused.returncode == 4, refused.stderr
        assert "charge 40%" in refused.stderr
        agent("simulate", "charge", "gen10", "95", env=env)
        allowed = agent(*enable, env=env)
        assert allowed.returncode == 0, allowed.stderr
        # the iLO reads the state the change left
        controller = ilo.documents()["/redfish/v1/Systems/1/SmartStorage/ArrayControllers/0/"]
        assert controller["WriteCacheWithoutBackupPowerEnabled"] is True


def _readme_lines() -> list[str]:
    section = (ROOT_DIR / "README.md").read_text().split("## Using it\n", 1)[1]
    block = next(b for b in re.findall(r"```sh\n(.*?)```", section, re.S)
                 if "simulate ilo" in b)
    return [line.split("  #", 1)[0].strip() for line in block.splitlines()]


def test_the_readmes_simulated_ilo_lines_work_as_written(tmp_path):
    """Each line as the README has it, with ``~`` the test's home and the README's port
    8443 a free one: ``simulate ilo`` as a process, the others in this process (serve's
    /probe: its prober, built from the configuration the iLO wrote)."""
    install, run, status, serve, curl, low, refused, high, allowed = _readme_lines()
    assert install.endswith("pip install '.[simulate]'")  # the test's environment has it
    home, port = tmp_path / "home", closed_port().rsplit(":", 1)[1]
    home.mkdir()

    def words(line: str) -> list[str]:
        line = line.replace("~/", f"{home}/").replace("127.0.0.1:8443", f"127.0.0.1:{port}")
        return shlex.split(line.removesuffix("&").strip())[1:]  # after "smartarray-agent"

    env = {**os.environ, "HOME": str(home), "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim")}
    process = subprocess.Popen([sys.executable, "-m", "smartarray_agent", *words(run),
                                "--port", port], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        printed = [process.stdout.readline() for _ in range(4)]
        assert printed[0].startswith(f"simulated iLO 5 of gen10 on https://127.0.0.1:{port}")
        shown = agent(*words(status), env=env)
        assert shown.returncode == 0, shown.stderr
        assert "backup power     batteries x1, OK, charge 100%" in shown.stdout
        config = load_config(Path(words(serve)[2]))
        assert config.probe is not None
        query = curl.split("?", 1)[1].split("'", 1)[0].replace("8443", port)
        with endpoint(Prober(config.probe, 80.0)) as server:
            answer, page = get(server, query)
        assert answer == 200 and value(page, "smartarray_probe_success") == 1.0
        assert [v for (name, _), v in samples(page).items()
                if name == "smartarray_backup_power_charge_ratio"] == [1.0]
        assert agent(*words(low), env=env).returncode == 0
        assert agent(*words(refused), "--lock-file", str(tmp_path / "cli.lock"),
                     env=env).returncode == 4
        assert agent(*words(high), env=env).returncode == 0
        assert agent(*words(allowed), "--lock-file", str(tmp_path / "cli.lock"),
                     env=env).returncode == 0
    finally:
        process.terminate()
        assert process.wait(30) == 0
