"""``smartarray-agent run`` on the simulator, scraped over loopback HTTP: as a real process
where the process is the subject (its signals, its exit code, the vendor CLI it ends), else
its daemon in this process (tests/agent_process.py)."""

from __future__ import annotations

import gzip
import signal
import socket
import subprocess
import sys
import time

import pytest

from smartarray_agent.config import Overrides
from smartarray_agent.daemon.agent import Agent, StartError
from smartarray_agent.daemon.notify import Notifier
from smartarray_agent.simulator import vendor_argv

from .agent_process import (
    AgentInProcess,
    AgentProcess,
    names,
    parse_samples,
    processes_running,
    scenario_file,
    value,
)
from .invocations import read_invocations


def config(directory, scenario, *, interval_s=3600, stale_after_s=None) -> str:
    """A round every ``interval_s``; in this process :meth:`AgentInProcess.collect` asks for
    one (udev's debounce is 0)."""
    stale = f"stale_after_s = {stale_after_s}" if stale_after_s else ""
    return f"""
[ssacli]
simulate = "{scenario}"
lock_file = "{directory}/cli.lock"
timeout_s = 60
[collect]
interval_s = {interval_s}
{stale}
[sysfs]
enabled = false
udev_debounce_s = 0
"""


def ssacli_ok(samples) -> bool:
    return value(samples, "smartarray_collector_success", collector="ssacli") == 1.0


def simulator_program(directory, scenario) -> str:
    """The simulator as the vendor CLI's program (``simulate`` answers in the agent's own
    process): here the console's process is the subject."""
    program = directory / "ssacli"
    program.write_text(f"#!{sys.executable}\nimport os, sys\nargv = {vendor_argv(scenario)!r}\n"
                       "os.execv(argv[0], argv + sys.argv[1:])\n")
    program.chmod(0o755)
    return f'path = "{program}"'


def test_endpoints_serve_the_last_snapshot_and_sigterm_stops_cleanly(tmp_path):
    scenario = scenario_file(tmp_path, "gen9-battery")
    text = config(tmp_path, scenario).replace(
        f'simulate = "{scenario}"', simulator_program(tmp_path, scenario))
    agent = AgentProcess(tmp_path, text).start()
    try:
        samples = agent.wait_for(ssacli_ok)
        info = [labels for name, labels in samples if name == "smartarray_controller_info"]
        assert dict(info[0])["model"] == "Smart Array P440ar"
        assert value(samples, "smartarray_backup_power_status", controller="0", state="ok") == 1
        assert value(samples, "smartarray_unprotected_write_cache", controller="0") == 0
        # its own process, as prometheus_client's process collector gives it (issue #29)
        assert value(samples, "process_resident_memory_bytes") > 10 * 2**20
        assert value(samples, "process_open_fds") > 0
        started = value(samples, "process_start_time_seconds")
        assert started is not None and 0 <= time.time() - started < 600

        status, headers, body = agent.request("/metrics")
        assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        assert "Content-Encoding" not in headers
        status, headers, zipped = agent.request("/metrics", headers={"Accept-Encoding": "gzip"})
        assert headers["Content-Encoding"] == "gzip"
        assert names(parse_samples(gzip.decompress(zipped).decode())) == names(samples)
        status, headers, body = agent.request("/metrics", method="HEAD")
        assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000
        status, headers, body = agent.request("/")
        assert status == 200 and b'href="metrics"' in body
        assert headers["Content-Type"].startswith("text/html")
        assert agent.request("/-/healthy")[:3:2] == (200, b"OK\n")
        assert agent.request("/nothing-here")[0] == 404
        assert not _console_open(tmp_path / "sim-state"), "the CLI is free between rounds"

        code, _ = agent.stop()
        assert code == 0, agent.logs
        assert processes_running(str(scenario)) == []
        assert not _console_open(tmp_path / "sim-state"), "the stop ended the console"
        assert "SIGTERM: stopping" in agent.logs
    finally:
        agent.kill()


def test_a_hung_cli_does_not_hold_up_scrapes_and_sigterm_still_stops(tmp_path):
    """A scrape is a lookup of the last page, answered while a collection hangs for good;
    SIGTERM ends the agent anyway, and the hung vendor CLI with it."""
    scenario = scenario_file(tmp_path, "gen9-battery")
    agent = AgentProcess(tmp_path, config(tmp_path, scenario, interval_s=1)).start()
    try:
        good = agent.wait_for(ssacli_ok)
        scenario_file(tmp_path, "gen9-battery", {"hang": ["*"]})
        _wait_until(lambda: _hanging(scenario), what="a collection to hang")
        for _ in range(3):
            samples = agent.samples(timeout_s=60)
            assert ssacli_ok(samples)  # the last collection that ended did succeed
            assert names(samples) == names(good)
        assert _hanging(scenario), "the collection is still hanging"

        code, _ = agent.stop(timeout_s=60)
        assert code == 0, agent.logs
        assert "ended 1 vendor process(es)" in agent.logs
        assert processes_running(str(scenario)) == []
    finally:
        agent.kill()


def test_a_failed_collection_shows_and_its_data_goes_stale(tmp_path):
    scenario = scenario_file(tmp_path, "failed-battery")
    agent = AgentInProcess(tmp_path, config(tmp_path, scenario, interval_s=3,
                                            stale_after_s=3)).start()
    try:
        good = agent.wait_for(ssacli_ok)
        last_good = value(good, "smartarray_collector_last_success_timestamp_seconds",
                          collector="ssacli")
        scenario_file(tmp_path, "failed-battery", {"crash": ["*"]})
        agent.collect()
        failed = agent.samples()
        assert not ssacli_ok(failed)
        # The last good values stay, with the time they were read...
        assert value(failed, "smartarray_backup_power_status", controller="0",
                     state="failed") == 1
        assert value(failed, "smartarray_collector_last_success_timestamp_seconds",
                     collector="ssacli") >= last_good
        # ...until they are older than stale_after_s, then they go; the failure stays.
        stale = agent.wait_for(lambda s: "smartarray_controller_info" not in names(s))
        assert value(stale, "smartarray_collector_success", collector="ssacli") == 0
        assert "smartarray_collector_last_success_timestamp_seconds" in names(stale)
        assert "collector ssacli failed" in agent.logs
    finally:
        agent.stop()


def test_a_reload_applies_the_file_and_a_bad_file_keeps_the_running_configuration(tmp_path):
    """What SIGHUP does (the signal itself: test_a_reload_right_after_start_...)."""
    agent = AgentInProcess(tmp_path, config(tmp_path, "gen9-battery")).start()
    try:
        agent.wait_for(ssacli_ok)
        agent.config_path.write_text(config(tmp_path, "two-controllers"))
        agent.reload()
        agent.wait_for(lambda s: value(s, "smartarray_controller_status", controller="1",
                                       state="ok") == 1)
        agent.config_path.write_text("[collect]\ninterval_s = 'often'\n")
        agent.reload()
        assert "reload failed" in agent.logs
        assert "agent.toml:2: collect.interval_s:" in agent.logs
        assert ssacli_ok(agent.samples())
    finally:
        agent.stop()


def test_a_missing_vendor_cli_is_a_failed_collection_not_a_dead_agent(tmp_path):
    text = config(tmp_path, "x").replace('simulate = "x"', f'path = "{tmp_path}/no-ssacli"')
    agent = AgentInProcess(tmp_path, text).start()
    try:
        samples = agent.wait_for(lambda s: value(s, "smartarray_collector_success",
                                                 collector="ssacli") == 0)
        assert "no-ssacli does not exist" in agent.logs
        assert "smartarray_controller_info" not in names(samples)
    finally:
        agent.stop()


def test_an_address_in_use_is_one_error_line_and_exit_7(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        (tmp_path / "agent.toml").write_text(config(tmp_path, "gen9-battery"))
        result = subprocess.run(
            [sys.executable, "-m", "smartarray_agent", "run", "--config",
             str(tmp_path / "agent.toml"), "--listen", f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=30,
        )
    assert result.returncode == 7
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in result.stderr


def _console_open(state) -> bool:
    """A console session of the simulator has started and not ended (its invocation log, in
    a process of its own or in the agent's)."""
    return any(i.mode == "console" and i.end_monotonic is None for i in read_invocations(state))


def _hanging(scenario) -> bool:
    """A simulator process of ``scenario`` got a command, did not answer, and still runs (the
    hang fault sleeps once it has logged the command)."""
    state = scenario.parent / "sim-state"
    running = {pid for pid, _ in processes_running(str(scenario))}
    return any(i.commands and i.end_monotonic is None and i.pid in running
               for i in read_invocations(state))


def _wait_until(condition, *, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_a_reload_applies_policy_audit_and_redfish_at_once(tmp_path):
    base = config(tmp_path, "unsafe-nbwc")
    agent = AgentInProcess(tmp_path, base).start()
    try:
        agent.wait_for(lambda s: value(s, "smartarray_no_battery_write_cache_enabled",
                                       controller="0") == 1)
        audit = tmp_path / "audit.jsonl"
        credentials = tmp_path / "ilo.toml"
        credentials.write_text('username = "monitor"\npassword = "x"\n')
        credentials.chmod(0o600)
        agent.config_path.write_text(base + f"""
[policy]
disable_unprotected_write_cache = true
[audit]
file = "{audit}"
[redfish]
address = "https://127.0.0.1:9"
credentials_file = "{credentials}"
""")
        agent.reload()
        samples = agent.wait_for(
            lambda s: value(s, "smartarray_no_battery_write_cache_enabled", controller="0") == 0
            and value(s, "smartarray_collector_success", collector="redfish") is not None)
        assert value(samples, "smartarray_collector_success", collector="redfish") == 0
        assert "smartarray-agent (guard)" in audit.read_text()  # the reloaded [audit] file
    finally:
        agent.stop()


def test_metrics_answer_before_the_first_collection_ends(tmp_path):
    """Before a collector's first attempt ends it has no series at all: a first scrape must
    not look like a failure (it showed smartarray_collector_success 0; issue #43 finding 6)."""
    scenario = scenario_file(tmp_path, "gen9-battery", {"startup_delay_s": 300})
    agent = AgentInProcess(tmp_path, config(tmp_path, scenario)).start()
    try:
        samples = agent.samples()
        assert "smartarray_build_info" in names(samples)  # the page answers
        assert {name for name in names(samples) if name.startswith("smartarray_")} == {
            "smartarray_build_info"}
    finally:
        agent.stop()  # ends the vendor CLI still starting


@pytest.mark.parametrize(("address", "warned"), [("0.0.0.0:0", True), ("127.0.0.1:0", False),
                                                 ("[::1]:0", False)])
def test_listening_beyond_loopback_without_tls_and_auth_warns(tmp_path, caplog, address,
                                                               warned):
    caplog.set_level("WARNING", logger="smartarray_agent.daemon.agent")
    config_path = tmp_path / "agent.toml"
    config_path.write_text(config(tmp_path, "gen9-battery"))
    agent = Agent(config_path, Overrides(listen_address=address), Notifier(None))
    try:
        agent.start()
    except StartError:
        pytest.skip(f"cannot listen on {address} here")
    try:
        assert ("listening beyond loopback" in caplog.text) is warned
    finally:
        agent.stop()


SIGNALS_RIGHT_AFTER_START = """
import logging, os, signal, sys
from pathlib import Path
from smartarray_agent.config import Overrides
from smartarray_agent.daemon.agent import Agent
from smartarray_agent.daemon.notify import Notifier

logging.basicConfig(level=logging.INFO)
agent = Agent(None, Overrides(simulate="gen9-battery", listen_address="127.0.0.1:0",
                              lock_file=Path(sys.argv[1])), Notifier(None))
agent.start()  # listening and collecting: systemd may send a reload from here on
os.kill(os.getpid(), signal.SIGHUP)
os.kill(os.getpid(), signal.SIGTERM)
agent.serve_until_stopped()
print("stopped")
"""


def test_a_reload_right_after_start_is_handled_not_fatal(tmp_path):
    """READY can reach systemd from the first round, before the main thread waits for
    signals: a SIGHUP (systemctl reload) or SIGTERM from then on must be handled, not end
    the daemon by the signal's default action."""
    result = subprocess.run([sys.executable, "-c", SIGNALS_RIGHT_AFTER_START,
                             str(tmp_path / "cli.lock")],
                            capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (0, "stopped\n"), result.stderr
    assert "configuration reloaded" in result.stderr and "SIGTERM: stopping" in result.stderr


def test_stop_puts_back_the_signal_handling_start_replaced(tmp_path):
    """An agent started and stopped in a process that goes on (a test, an embedding) leaves
    neither its handlers nor a wakeup descriptor it has closed: a later SIGINT must be
    Python's KeyboardInterrupt again, not a write into a closed pipe."""
    config_path = tmp_path / "agent.toml"
    config_path.write_text(config(tmp_path, "gen9-battery"))
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    agent = Agent(config_path, Overrides(listen_address="127.0.0.1:0"), Notifier(None))
    agent.start()
    agent.stop()
    assert {sig: signal.getsignal(sig) for sig in before} == before
    assert signal.set_wakeup_fd(-1) == -1  # none was left behind
