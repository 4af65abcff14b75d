"""A check runs the vendor CLI once (issue #29, finding 6): its version, which the one-shot
``ctrl all show config detail`` does not print, was asked of a second run (``version``) by
every command. It is remembered per CLI (the files its command names, by path, mtime and size)
beside the host lock, so only the first command after an install or upgrade of the CLI asks."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from smartarray_agent.collectors.ssacli.discover import VendorCli
from smartarray_agent.collectors.ssacli.lock import HostLock
from smartarray_agent.collectors.ssacli.runner import VendorRunner
from smartarray_agent.collectors.ssacli.versions import VersionCache
from smartarray_agent.simulator import BUNDLED, vendor_argv
from smartarray_agent.simulator.state import read_invocations
from smartarray_agent.vendor import version_file

from .agent_cli import Ran
from .agent_cli import agent as run_agent

CONFIG_DETAIL = "ctrl all show config detail"


def agent(state: Path, *args: str, faults: dict | None = None) -> Ran:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTARRAY_SIM")}
    env["SMARTARRAY_SIM_STATE_DIR"] = str(state)
    if faults:
        env["SMARTARRAY_SIM_FAULTS"] = json.dumps(faults)
    return run_agent(*args, env=env)


def runs(state: Path) -> list[list[str]]:
    """The commands of each vendor CLI process started so far, in order."""
    return [invocation.commands for invocation in read_invocations(state)]


def test_repeated_checks_run_the_vendor_cli_once_each(tmp_path):
    state = tmp_path / "sim"
    first = agent(state, "check", "--simulate", "gen9-battery")
    assert first.returncode == 0, first.stdout + first.stderr
    before = len(runs(state))
    for _ in range(2):
        again = agent(state, "check", "--simulate", "gen9-battery")
        assert again.returncode == 0, again.stdout + again.stderr
    assert runs(state)[before:] == [[CONFIG_DETAIL], [CONFIG_DETAIL]]


def test_the_remembered_version_is_shown_and_a_changed_cli_is_asked_again(tmp_path):
    """``status --json`` shows the version the CLI printed; a CLI whose files changed (here the
    simulated one's scenario, as an upgrade changes the binary) is asked again. Without a
    console (whose banner tells it) the one-shot runs ask ``version``."""
    state = tmp_path / "sim"
    scenario = tmp_path / "box.toml"
    scenario.write_text(f'cli_version = "6.10-2.0"\n{(BUNDLED / "gen9-battery.toml").read_text()}')

    def version() -> str:
        result = agent(state, "status", "--json", "--simulate", str(scenario),
                       faults={"console_refused": True})
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["cli_version"]

    def one_shot() -> list[list[str]]:
        return [i.commands for i in read_invocations(state) if i.mode == "argv"]

    assert version() == "6.10-2.0"
    assert one_shot()[-2:] == [[CONFIG_DETAIL], ["version"]]
    assert version() == "6.10-2.0"
    assert one_shot()[-2:] == [["version"], [CONFIG_DETAIL]]  # the second asked nothing
    scenario.write_text(scenario.read_text().replace("6.10-2.0", "6.45-8.0"))
    assert version() == "6.45-8.0"
    assert one_shot()[-2:] == [[CONFIG_DETAIL], ["version"]]


def test_status_reads_the_version_from_the_console_it_reads_in(tmp_path):
    state = tmp_path / "sim"
    scenario = tmp_path / "box.toml"
    scenario.write_text(f'cli_version = "6.10-2.0"\n{(BUNDLED / "gen9-battery.toml").read_text()}')
    result = agent(state, "status", "--json", "--simulate", str(scenario))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["cli_version"] == "6.10-2.0"
    assert runs(state) == [[CONFIG_DETAIL]]  # one start (issue #40)


def test_only_a_lasting_answer_is_remembered(tmp_path, monkeypatch):
    """An ``Error:`` (here the vendor's lock conflict) may not recur: not remembered."""
    monkeypatch.setenv("SMARTARRAY_SIM_FAULTS", json.dumps({"lock_conflict": True}))
    cli = VendorCli(tuple(vendor_argv("gen9-battery")), "simulator")
    lock = tmp_path / "cli.lock"
    cache = VersionCache(version_file(lock))
    runner = VendorRunner(cli, HostLock(lock, 5), timeout_s=30, console=False, versions=cache)
    try:
        assert runner.version() is None
    finally:
        runner.close()
    assert not cache.path.exists()
    monkeypatch.delenv("SMARTARRAY_SIM_FAULTS")
    runner = VendorRunner(cli, HostLock(lock, 5), timeout_s=30, console=False, versions=cache)
    try:
        assert runner.version() is not None
    finally:
        runner.close()
    assert cache.get(cli.argv) == runner.version()


def test_a_version_file_others_may_write_or_a_link_is_not_believed(tmp_path):
    argv = (sys.executable,)
    cache = VersionCache(tmp_path / "cli.lock.version")
    cache.put(argv, "1.0")
    assert cache.get(argv) == "1.0"
    assert cache.get(("/bin/sh",)) is None  # another CLI
    cache.path.chmod(0o666)
    assert cache.get(argv) is None
    cache.path.chmod(0o600)
    elsewhere = tmp_path / "elsewhere"
    cache.path.rename(elsewhere)
    cache.path.symlink_to(elsewhere)
    assert cache.get(argv) is None
