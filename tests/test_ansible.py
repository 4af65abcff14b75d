"""The Ansible collection smartarray.agent: its modules run by ansible-playbook (connection
local) against the agent and the bundled simulator, as an operator's play runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path

import pytest

from .invocations import read_invocations

pytestmark = pytest.mark.ansible

REPO = Path(__file__).resolve().parents[1]
COLLECTIONS = REPO / "packaging" / "ansible"
COLLECTION = COLLECTIONS / "ansible_collections" / "smartarray" / "agent"
BIN = Path(sys.executable).parent

needs_ansible = pytest.mark.skipif(
    not (BIN / "ansible-playbook").exists(),
    reason=f"ansible-core is not installed next to {sys.executable} (pip install '.[test]')",
)

# The issue's "Done when" play, verbatim.
DONE_WHEN = """\
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - smartarray.agent.cache: {slot: "0", ratio: "25/75", simulate: gen9-battery}
      check_mode: true
      register: dry
    - smartarray.agent.cache: {slot: "0", ratio: "25/75", simulate: gen9-battery}
      register: first
    - smartarray.agent.cache: {slot: "0", ratio: "25/75", simulate: gen9-battery}
      register: second
    - smartarray.agent.cache: {slot: "0", no_battery_write_cache: true, simulate: unsafe-nbwc}
      register: unsafe
      ignore_errors: true
    - assert:
        that: [dry is changed, first is changed, second is not changed, unsafe is failed]
"""

# Each scenario in its own simulator state folder; every registered result saved as JSON.
RECORDED = """\
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: One controller, gen9-battery
      environment: {SMARTARRAY_SIM_STATE_DIR: "{{ sim }}/gen9"}
      block:
        - smartarray.agent.cache: {slot: "0", ratio: "25/75", simulate: gen9-battery}
          check_mode: true
          diff: true
          register: dry
        - smartarray.agent.facts: {simulate: gen9-battery}
          register: after_dry
        - smartarray.agent.cache: {slot: "0", ratio: "25/75", simulate: gen9-battery}
          diff: true
          register: first
        - smartarray.agent.cache: {serial: PSIM9P440AR001, ratio: "25/75",
                                   simulate: gen9-battery}
          register: second
    - name: Failed batteries, unsafe-nbwc
      environment: {SMARTARRAY_SIM_STATE_DIR: "{{ sim }}/unsafe"}
      block:
        - smartarray.agent.cache: {slot: "0", no_battery_write_cache: true,
                                   simulate: unsafe-nbwc}
          register: unsafe
          ignore_errors: true
    - name: Two controllers
      environment: {SMARTARRAY_SIM_STATE_DIR: "{{ sim }}/two"}
      block:
        - smartarray.agent.cache: {all: true, ratio: "25/75", simulate: two-controllers}
          register: all_first
        - smartarray.agent.cache: {all: true, ratio: "25/75", simulate: two-controllers}
          register: all_second
        - smartarray.agent.facts: {simulate: two-controllers}
          register: facts
    - name: Gen10, two settings in one task
      environment: {SMARTARRAY_SIM_STATE_DIR: "{{ sim }}/gen10"}
      block:
        - smartarray.agent.cache: &gen10 {slot: "0", drive_write_cache: false,
                                          usage: configured, logical_drive: "1",
                                          caching: false, simulate: gen10}
          check_mode: true
          diff: true
          register: gen10_dry
        - smartarray.agent.cache: *gen10
          register: gen10
    - name: Bad options fail before the agent runs
      smartarray.agent.cache: {slot: "0", all: true, ratio: "25/75"}
      register: both_targets
      ignore_errors: true
    - name: A threshold that is not a number from 0 to 100 fails before the agent runs
      environment: {SMARTARRAY_SIM_STATE_DIR: "{{ sim }}/nan"}
      smartarray.agent.cache: {slot: "0", no_battery_write_cache: true,
                               threshold_percent: "nan", simulate: unsafe-nbwc}
      register: nan_threshold
      ignore_errors: true
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'dry': dry, 'after_dry': after_dry, 'first': first, 'second': second,
                      'unsafe': unsafe, 'all_first': all_first, 'all_second': all_second,
                      'facts': facts, 'both_targets': both_targets,
                      'nan_threshold': nan_threshold,
                      'gen10_dry': gen10_dry, 'gen10': gen10} | to_json }}"
"""


def ansible_env(tmp_path: Path) -> dict[str, str]:
    """The environment the issue names (collections path, the agent's bin on PATH, an empty
    simulator state folder) plus an agent config that keeps the audit log and CLI lock in
    ``tmp_path``, and Ansible's own files there too."""
    config = tmp_path / "agent.toml"
    config.write_text(f'[audit]\nfile = "{tmp_path / "audit.jsonl"}"\n'
                      f'[ssacli]\nlock_file = "{tmp_path / "cli.lock"}"\n')
    (tmp_path / "sim").mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("ANSIBLE_", "SMARTARRAY_"))}
    env.update({
        "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        "ANSIBLE_COLLECTIONS_PATH": str(COLLECTIONS),
        "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim"),
        "SMARTARRAY_AGENT_CONFIG": str(config),
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-local"),
        "ANSIBLE_REMOTE_TEMP": str(tmp_path / "ansible-remote"),
        "ANSIBLE_HOME": str(tmp_path / "ansible-home"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
    })
    return env


def playbook(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess:
    play = tmp_path / "play.yml"
    play.write_text(text)
    return subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", str(play), *args],
        capture_output=True, text=True, env=ansible_env(tmp_path), timeout=600,
        stdin=subprocess.DEVNULL)


def recap(result: subprocess.CompletedProcess, host: str = "localhost") -> dict[str, int]:
    """The PLAY RECAP counts of ``host`` (ok, changed, failed, ...) of a run that passed."""
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith(f"{host} "))
    return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", line)}


def audit_outcomes(tmp_path: Path) -> list[str]:
    """The outcome of each change in the agent's audit log, dry runs left out. Read both
    ways the agent has written it: one record a change with its ``verdict``, or an intent
    and an outcome record (``event``) with the ``outcome``."""
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    outcomes = [record["outcome"] if "event" in record else record["verdict"]
                for record in records if record.get("event", "outcome") == "outcome"]
    return [outcome.replace("-", "_") for outcome in outcomes if outcome != "dry_run"]


def modifies(state_dir: Path) -> list[str]:
    return [command for invocation in read_invocations(state_dir)
            for command in invocation.commands if "modify" in command and "=?" not in command]


@needs_ansible
def test_the_issues_done_when_play_passes(tmp_path):
    counts = recap(playbook(tmp_path, DONE_WHEN))
    assert (counts["ok"], counts["changed"], counts["failed"], counts["ignored"]) == (5, 2, 0, 1)
    # check mode sent nothing, the re-run sent nothing, the refusal sent nothing
    assert modifies(tmp_path / "sim") == ["ctrl slot=0 modify cacheratio=25/75"]
    assert audit_outcomes(tmp_path) == ["changed", "unchanged", "refused"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[dict, Path]:
    """The results of one run of RECORDED, and its folder."""
    if not (BIN / "ansible-playbook").exists():
        pytest.skip("ansible-core is not installed (pip install '.[test]')")
    tmp_path = tmp_path_factory.mktemp("recorded")
    out = tmp_path / "results.json"
    result = playbook(tmp_path, RECORDED, "-e", f"sim={tmp_path / 'sim'}", "-e", f"out={out}")
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(out.read_text()), tmp_path


def only(result: dict) -> dict:
    assert len(result["controllers"]) == 1, result["controllers"]
    return result["controllers"][0]


@needs_ansible
def test_check_mode_reports_the_change_with_a_diff_and_sends_nothing(recorded):
    results, tmp_path = recorded
    dry = results["dry"]
    assert dry["changed"] is True and not dry.get("failed")
    ctrl = only(dry)
    assert ctrl["before"]["cache_ratio"] == "10/90"
    assert ctrl["after"]["cache_ratio"] == "25/75"  # predicted
    assert ctrl["commands"] == [["ctrl", "slot=0", "modify", "cacheratio=25/75"]]
    assert ctrl["results"][0]["verdict"].replace("-", "_") == "dry_run"
    (diff,) = dry["diff"]
    assert diff["before"]["cache_ratio"] == "10/90" and diff["after"]["cache_ratio"] == "25/75"
    assert "PSIM9P440AR001" in diff["before_header"]
    # the controller read right after the check-mode task still shows the old ratio
    (seen,) = results["after_dry"]["ansible_facts"]["smartarray_agent"]["controllers"]
    assert (seen["cache"]["read_percent"], seen["cache"]["write_percent"]) == (10, 90)


@needs_ansible
def test_apply_returns_before_after_and_the_vendor_command(recorded):
    results, tmp_path = recorded
    first = results["first"]
    assert first["changed"] is True
    ctrl = only(first)
    assert (ctrl["slot"], ctrl["serial"]) == ("0", "PSIM9P440AR001")
    assert ctrl["before"]["cache_ratio"] == "10/90"
    assert ctrl["after"]["cache_ratio"] == "25/75"  # as the agent read it back
    assert ctrl["results"][0]["after"]["cache_ratio"] == "25/75"
    assert ctrl["commands"] == [["ctrl", "slot=0", "modify", "cacheratio=25/75"]]
    # the agent's audit record where it reports one (null before it does)
    (audit,) = ctrl["audit"]
    assert audit is None or audit["outcome"] == "changed"
    assert first["diff"][0]["after"]["cache_ratio"] == "25/75"
    assert modifies(tmp_path / "sim" / "gen9") == ["ctrl slot=0 modify cacheratio=25/75"]


@needs_ansible
def test_a_second_identical_run_changes_nothing(recorded):
    results, _ = recorded
    ctrl = only(results["second"])
    assert results["second"]["changed"] is False and ctrl["commands"] == []
    assert ctrl["before"] == ctrl["after"]
    assert ctrl["results"][0]["verdict"] == "unchanged"


@needs_ansible
def test_a_refusal_fails_the_task_with_the_agents_message_and_rc(recorded):
    results, tmp_path = recorded
    unsafe = results["unsafe"]
    assert unsafe["failed"] is True and unsafe["changed"] is False
    assert unsafe["rc"] == 4
    message = unsafe["msg"]
    assert message.startswith("refused:")
    assert "PSIM9UNSAFE001" in message  # the controller
    assert "batteries failed" in message  # its backup power
    assert "80%" in message  # the threshold
    assert only(unsafe)["commands"] == []
    assert modifies(tmp_path / "sim" / "unsafe") == []


@needs_ansible
def test_all_changes_every_controller_with_a_cache_then_nothing(recorded):
    results, tmp_path = recorded
    first, second = results["all_first"], results["all_second"]
    assert first["changed"] is True and second["changed"] is False
    assert [c["serial"] for c in first["controllers"]] == ["PSIM9TWOCTRL00", "PSIM9TWOCTRL01"]
    # each controller judged on its own: slot 1 already shows 25/75, so only slot 0 changes
    assert [(c["before"]["cache_ratio"], c["after"]["cache_ratio"], c["changed"])
            for c in first["controllers"]] == [("10/90", "25/75", True), ("25/75", "25/75", False)]
    assert not any(c["changed"] for c in second["controllers"])
    assert first["skipped"] == []
    assert modifies(tmp_path / "sim" / "two") == ["ctrl slot=0 modify cacheratio=25/75"]
    # one vendor CLI start for each task: both `all` tasks and the facts (issue #40)
    assert len(read_invocations(tmp_path / "sim" / "two")) == 3
    facts = results["facts"]["ansible_facts"]["smartarray_agent"]
    assert [(c["cache"]["read_percent"], c["cache"]["write_percent"])
            for c in facts["controllers"]] == [(25, 75), (25, 75)]


@needs_ansible
def test_facts_carry_the_status_contract_and_the_agent_version(recorded):
    results, _ = recorded
    facts = results["facts"]
    assert facts["changed"] is False
    agent = facts["ansible_facts"]["smartarray_agent"]
    assert agent["agent_version"] == version("smartarray-agent")
    assert [c["slot"] for c in agent["controllers"]] == ["0", "1"]
    assert agent["controllers"][0]["backup_power"]["status"] == "ok"
    assert agent["error"] is None


@needs_ansible
def test_check_mode_predicts_what_two_settings_then_show(recorded):
    results, tmp_path = recorded
    dry, applied = only(results["gen10_dry"]), only(results["gen10"])
    assert results["gen10_dry"]["changed"] and results["gen10"]["changed"]
    assert dry["before"]["drive_write_cache_policy"]["configured"] == "default"
    assert dry["before"]["logical_drive_caching"] == {"1": True}
    # the predicted state of check mode is the state the controller shows after the run
    assert dry["after"] == applied["after"]
    assert applied["after"]["drive_write_cache_policy"]["configured"] == "disable"
    assert applied["after"]["logical_drive_caching"] == {"1": False}
    assert dry["commands"] == applied["commands"]
    assert len(applied["commands"]) == 2
    assert len(modifies(tmp_path / "sim" / "gen10")) == 2  # none of them from check mode


@needs_ansible
def test_two_ways_to_name_the_controllers_are_rejected(recorded):
    results, _ = recorded
    both = results["both_targets"]
    assert both["failed"] is True
    assert "mutually exclusive" in both["msg"] and "slot" in both["msg"]
    assert "controllers" not in both  # the agent was never run


@needs_ansible
def test_a_threshold_of_nan_fails_and_sends_nothing(recorded):
    results, tmp_path = recorded
    nan = results["nan_threshold"]
    assert nan["failed"] is True
    assert "threshold_percent" in nan["msg"] and "0 to 100" in nan["msg"]
    assert modifies(tmp_path / "sim" / "nan") == []


@needs_ansible
def test_the_collection_builds(tmp_path):
    result = subprocess.run(
        [str(BIN / "ansible-galaxy"), "collection", "build", str(COLLECTION),
         "--output-path", str(tmp_path)],
        capture_output=True, text=True, env=ansible_env(tmp_path), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = tmp_path.glob("smartarray-agent-*.tar.gz")
    with tarfile.open(built) as archive:
        names = set(archive.getnames())
        manifest = json.load(archive.extractfile("MANIFEST.json"))
    info = manifest["collection_info"]
    assert (info["namespace"], info["name"]) == ("smartarray", "agent")
    assert info["license"] == ["Apache-2.0"]
    # The project's one address (pyproject.toml's [project.urls], the alerts' runbook links).
    assert info["repository"] == "https://github.com/smartarray-agent/smartarray-agent"
    for name in ("plugins/modules/cache.py", "plugins/modules/facts.py",
                 "plugins/module_utils/agent.py", "meta/runtime.yml", "LICENSE", "README.md",
                 "roles/smartarray_agent/tasks/main.yml",
                 "roles/smartarray_agent/files/alerts.yml"):
        assert name in names
