"""The role smartarray.agent.smartarray_agent applied to localhost with its files under a temporary
root: check mode writes nothing, the first run writes every file, the second changes
nothing. Packages and units are left out here (smartarray_agent_install and
smartarray_agent_manage_services false); a booted container would be needed for them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tomllib
from pathlib import Path

import bcrypt
import pytest
import yaml

from tests.test_ansible import BIN, ansible_env, recap

pytestmark = [
    pytest.mark.ansible,
    pytest.mark.skipif(not (BIN / "ansible-playbook").exists(),
                       reason="ansible-core is not installed (pip install '.[test]')"),
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="the role makes its files owned by root: run as root"),
]

# The rules the packages install; the role's copy is the same file (tests/test_mixin.py).
SHIPPED_RULES = Path(__file__).resolve().parent.parent / "packaging/prometheus/alerts.yml"
ROLE = (Path(__file__).resolve().parent.parent / "packaging/ansible/ansible_collections/"
        "smartarray/agent/roles/smartarray_agent")

PLAY = """\
- hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - smartarray.agent.smartarray_agent
"""


def role_vars(root: Path, **extra: object) -> dict:
    return {
        "smartarray_agent_install": False,
        "smartarray_agent_manage_services": False,
        "smartarray_agent_etc_dir": str(root / "etc"),
        "smartarray_agent_executable": str(BIN / "smartarray-agent"),
        "smartarray_agent_audit_file": str(root / "audit.jsonl"),
        "smartarray_agent_listen_address": "0.0.0.0:9712",
        "smartarray_agent_threshold_percent": 85,
        "smartarray_agent_redfish_address": "16.1.15.1",
        "smartarray_agent_redfish_username": "monitor",
        "smartarray_agent_redfish_password": "p\"w'd\\x",
        "smartarray_agent_file_sd_dir": str(root / "file_sd"),
        "smartarray_agent_file_sd_labels": {"rack": "r1"},
        **extra,
    }


def apply(tmp_path: Path, variables: dict, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    (tmp_path / "play.yml").write_text(PLAY)
    return subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", str(tmp_path / "play.yml"),
         "-e", f"@{tmp_path / 'vars.json'}", *args],
        capture_output=True, text=True, env=ansible_env(tmp_path), timeout=600,
        stdin=subprocess.DEVNULL)


def test_the_role_writes_a_checked_config_then_changes_nothing(tmp_path):
    root = tmp_path / "root"
    (root / "file_sd").mkdir(parents=True)
    hashed = bcrypt.hashpw(b"scrape-secret", bcrypt.gensalt(rounds=4)).decode()
    variables = role_vars(root, smartarray_agent_basic_auth_users={"prometheus": hashed})

    dry = recap(apply(tmp_path, variables, "--check", "--diff"))
    assert dry["changed"] > 0 and dry["failed"] == 0
    assert not (root / "etc").exists()
    assert list((root / "file_sd").iterdir()) == []

    first = recap(apply(tmp_path, variables))
    assert first["changed"] == 5  # directory, credentials, web.yml, config.toml, file_sd
    second = recap(apply(tmp_path, variables))
    assert second["changed"] == 0 and second["failed"] == 0

    etc = root / "etc"
    config = tomllib.loads((etc / "config.toml").read_text())
    assert config["web"] == {"listen_address": "0.0.0.0:9712",
                             "config_file": str(etc / "web.yml"),
                             "publish_dir": "/run/smartarray-agent-metrics"}
    assert config["policy"]["battery_threshold_percent"] == 85.0
    assert config["redfish"]["credentials_file"] == str(etc / "ilo-credentials.toml")
    checked = subprocess.run([str(BIN / "smartarray-agent"), "config", "check",
                              str(etc / "config.toml")], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    credentials = etc / "ilo-credentials.toml"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert credentials.stat().st_uid == 0
    assert tomllib.loads(credentials.read_text()) == {"username": "monitor",
                                                      "password": "p\"w'd\\x"}
    web = yaml.safe_load((etc / "web.yml").read_text())
    assert bcrypt.checkpw(b"scrape-secret", web["basic_auth_users"]["prometheus"].encode())
    assert stat.S_IMODE((etc / "web.yml").stat().st_mode) == 0o600

    targets = json.loads((root / "file_sd" / "localhost.json").read_text())
    assert targets == [{"targets": ["localhost:9712"], "labels": {"rack": "r1"}}]


@pytest.mark.parametrize("value", ["plain-password", "$2b$13$" + "a" * 53, "$2b$03$" + "a" * 53])
def test_a_password_or_a_cost_a_login_cannot_finish_stops_the_role(tmp_path, value):
    """A password where a bcrypt hash belongs, or a hash whose cost the agent's config check
    refuses (4 to 12, docs/agent.md), stops the role before anything is written."""
    root = tmp_path / "root"
    result = apply(tmp_path, role_vars(
        root, smartarray_agent_basic_auth_users={"prometheus": value}))
    assert result.returncode != 0
    assert "bcrypt hashes (not passwords) of cost 4 to 12" in result.stdout
    assert not (root / "etc").exists()


def test_a_config_the_agent_rejects_is_not_put_in_place(tmp_path):
    root = tmp_path / "root"
    result = apply(tmp_path, role_vars(root, smartarray_agent_listen_address="nowhere"))
    assert result.returncode != 0
    assert "failed to validate" in result.stdout + result.stderr
    assert not (root / "etc" / "config.toml").exists()


def test_textfile_mode_writes_no_scrape_target(tmp_path):
    root = tmp_path / "root"
    (root / "file_sd").mkdir(parents=True)
    result = apply(tmp_path, role_vars(root, smartarray_agent_mode="textfile"))
    assert recap(result)["failed"] == 0
    assert list((root / "file_sd").iterdir()) == []
    assert (root / "etc" / "config.toml").exists()



def test_the_rules_carry_the_operators_runbook_links(tmp_path):
    """Finding 2 of issue 28: the rules the role writes link each alert's runbook where the
    operator says, the rest of the shipped rules untouched; unset, the shipped file as is."""
    root = tmp_path / "root"
    rules = root / "rules" / "smartarray.yml"
    rules.parent.mkdir(parents=True)
    (root / "file_sd").mkdir()
    pattern = "https://wiki.example.com/storage/smartarray-runbooks#%s"
    variables = role_vars(root, smartarray_agent_rules_path=str(rules),
                          smartarray_agent_runbook_url_pattern=pattern)
    first = recap(apply(tmp_path, variables))
    assert first["failed"] == 0
    assert recap(apply(tmp_path, variables))["changed"] == 0

    shipped = yaml.safe_load(SHIPPED_RULES.read_text(encoding="utf-8"))
    written = yaml.safe_load(rules.read_text(encoding="utf-8"))
    names = []
    for group in written["groups"]:
        for rule in group["rules"]:
            names.append(rule["alert"])
            assert rule["annotations"].pop("runbook_url") == pattern % rule["alert"].lower()
    for group in shipped["groups"]:
        for rule in group["rules"]:
            del rule["annotations"]["runbook_url"]
    assert written == shipped and len(names) == len(set(names)) > 20

    rules.unlink()
    recap(apply(tmp_path, role_vars(root, smartarray_agent_rules_path=str(rules))))
    assert rules.read_bytes() == SHIPPED_RULES.read_bytes()


def test_no_rules_are_written_unless_asked(tmp_path):
    root = tmp_path / "root"
    (root / "file_sd").mkdir(parents=True)
    result = apply(tmp_path, role_vars(root))
    assert recap(result)["failed"] == 0
    assert "alert rules" in result.stdout and not list(root.rglob("*.yml"))


def probe_vars(root: Path, **extra: object) -> dict:
    """A probe node: two modules, one with its own CA, and a file_sd file for the probe job."""
    (root / "ca").mkdir(parents=True)
    (root / "ca" / "ilo-ca.pem").write_text("not checked until a probe\n")
    return role_vars(
        root,
        smartarray_agent_probe_targets=["ilo-*.example.net", "ilo-db02.example.net:443",
                                        "10.1.2.3", "ilo-db?.example.net", "[fd00::5]:8443",
                                        "10.99.0.0/24"],
        smartarray_agent_probe_modules={
            "default": {"username": "monitor", "password": "s3\"cr'et",
                        "ca_file": str(root / "ca" / "ilo-ca.pem")},
            "ilo4": {"username": "old", "password": "older", "verify_tls": False,
                     "read_timeout_s": 60},
        },
        smartarray_agent_probe_min_interval_s=120,
        smartarray_agent_probe_file_sd_path=str(root / "file_sd" / "ilo" / "prober.json"),
        smartarray_agent_probe_file_sd_labels={"datacenter": "fra1"},
        **extra,
    )


def test_a_probe_node_gets_a_checked_probe_table_and_a_target_list(tmp_path):
    """Issue 27 item 3: the [probe] table with a module per login, each login in its own
    root-only file, config check accepts it, and the probe job's file_sd file lists the iLOs
    (the allow-list's entries without wildcards or ranges) with the module as a URL parameter."""
    root = tmp_path / "root"
    (root / "file_sd" / "ilo").mkdir(parents=True)
    variables = probe_vars(root)
    first = recap(apply(tmp_path, variables))
    assert first["failed"] == 0
    assert recap(apply(tmp_path, variables))["changed"] == 0

    etc = root / "etc"
    config = tomllib.loads((etc / "config.toml").read_text())
    assert config["probe"] == {
        "targets": ["ilo-*.example.net", "ilo-db02.example.net:443", "10.1.2.3",
                    "ilo-db?.example.net", "[fd00::5]:8443", "10.99.0.0/24"],
        "timeout_s": 9.0, "max_sessions": 4, "min_interval_s": 120.0,
        "modules": {
            "default": {"credentials_file": str(etc / "probe-default-credentials.toml"),
                        "ca_file": str(root / "ca" / "ilo-ca.pem"), "verify_tls": True},
            "ilo4": {"credentials_file": str(etc / "probe-ilo4-credentials.toml"),
                     "verify_tls": False, "read_timeout_s": 60.0},
        },
    }
    checked = subprocess.run([str(BIN / "smartarray-agent"), "config", "check",
                              str(etc / "config.toml")], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for name, login in (("default", {"username": "monitor", "password": "s3\"cr'et"}),
                        ("ilo4", {"username": "old", "password": "older"})):
        written = etc / f"probe-{name}-credentials.toml"
        assert stat.S_IMODE(written.stat().st_mode) == 0o600 and written.stat().st_uid == 0
        assert tomllib.loads(written.read_text()) == login

    targets = json.loads((root / "file_sd" / "ilo" / "prober.json").read_text())
    assert targets == [{"targets": ["ilo-db02.example.net:443", "10.1.2.3", "[fd00::5]:8443"],
                        "labels": {"__param_module": "default", "datacenter": "fra1"}}]


def test_serve_gets_every_probe_file_by_load_credential(tmp_path):
    """The drop-in the role writes for serve (its template with the role's variables) hands
    over each module's login and CA file beside the web config, by the names serve looks for."""
    root = tmp_path / "root"
    hashed = bcrypt.hashpw(b"scrape-secret", bcrypt.gensalt(rounds=4)).decode()
    variables = probe_vars(root, smartarray_agent_basic_auth_users={"prometheus": hashed})
    play = f"""\
- hosts: localhost
  connection: local
  gather_facts: false
  vars_files: [{ROLE}/defaults/main.yml, {ROLE}/vars/main.yml]
  tasks:
    - ansible.builtin.template:
        src: {ROLE}/templates/serve-credentials.conf.j2
        dest: {tmp_path}/credentials.conf
        mode: "0644"
"""
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    (tmp_path / "dropin.yml").write_text(play)
    result = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", str(tmp_path / "dropin.yml"),
         "-e", f"@{tmp_path / 'vars.json'}"],
        capture_output=True, text=True, env=ansible_env(tmp_path), timeout=600,
        stdin=subprocess.DEVNULL)
    assert recap(result)["failed"] == 0, result.stdout
    etc = root / "etc"
    lines = [line for line in (tmp_path / "credentials.conf").read_text().splitlines()
             if line.startswith("LoadCredential=")]
    assert lines == [f"LoadCredential=web.yml:{etc}/web.yml",
                     f"LoadCredential=probe-default-credentials.toml:{etc}/probe-default-credentials.toml",
                     f"LoadCredential=probe-ilo4-credentials.toml:{etc}/probe-ilo4-credentials.toml",
                     f"LoadCredential=ilo-ca.pem:{root}/ca/ilo-ca.pem"]


@pytest.mark.parametrize(("change", "why"), [
    ({"smartarray_agent_publish_dir": ""}, "service mode with a publish_dir"),
    ({"smartarray_agent_probe_modules": {"default": {"username": "monitor"}}},
     "each\nwith a username and a password"),
    ({"smartarray_agent_probe_modules": {"../x": {"username": "a", "password": "b"}}},
     "names of letters"),
    ({"smartarray_agent_probe_file_sd_module": "ilo5"}, "_file_sd_module among them"),
    ({"smartarray_agent_probe_modules": {
        "a": {"username": "a", "password": "b", "ca_file": "/etc/pki/a/ca.pem"},
        "b": {"username": "a", "password": "b", "ca_file": "/etc/pki/b/ca.pem"}},
      "smartarray_agent_probe_file_sd_path": ""}, "files of distinct names"),
])
def test_a_probe_node_missing_a_piece_stops_the_role(tmp_path, change, why):
    root = tmp_path / "root"
    (root / "file_sd" / "ilo").mkdir(parents=True)
    result = apply(tmp_path, {**probe_vars(root), **change})
    assert result.returncode != 0
    assert " ".join(why.split()) in " ".join(result.stdout.split())
    assert not (root / "etc").exists()
