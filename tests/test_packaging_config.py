"""packaging/config.toml, the packaged /etc/smartarray-agent/config.toml: it loads, and every
key it shows in a comment is a real key whose shown value is the default."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import threading
import tomllib
from pathlib import Path

import pytest

from smartarray_agent.collectors.redfish.settings import RedfishSettings
from smartarray_agent.collectors.ssacli.lock import DEFAULT_SYSTEM_PATH
from smartarray_agent.config import Config, load_config
from smartarray_agent.write.audit import AuditLog

from .agent_cli import agent as run_agent

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = ROOT / "packaging" / "config.toml"
_COMMENTED = re.compile(r"^# (\[[a-z_]+\]|[a-z_]+ = .+)$")


def uncommented() -> str:
    """The file with every commented table header and ``key = value`` line made live."""
    return "\n".join(
        _COMMENTED.sub(r"\1", line) for line in PACKAGED.read_text(encoding="utf-8").splitlines()
    )


def test_the_packaged_config_loads():
    config = load_config(PACKAGED)
    assert config.audit.file == Path("/var/lib/smartarray-agent/audit.jsonl")


def test_the_packaged_daemon_publishes_for_the_unprivileged_serve_unit():
    # The root daemon listens on nothing; smartarray-agent-serve.service answers HTTP from
    # the directory systemd-tmpfiles makes for it (issue #26: the listener is not root).
    config = load_config(PACKAGED)
    tmpfiles = (ROOT / "systemd" / "tmpfiles.d" / "smartarray-agent.conf").read_text()
    assert config.web.publish_dir == Path("/run/smartarray-agent-metrics")
    assert f" {config.web.publish_dir} " in tmpfiles


def test_config_check_accepts_it():
    result = run_agent("config", "check", str(PACKAGED))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == f"{PACKAGED}: OK"


def test_every_commented_key_is_real_and_shows_its_default(tmp_path):
    text = uncommented()
    # `path` and `simulate` exclude each other; both are shown as examples, not defaults.
    # `publish_dir` is the package's setting, not the default.
    examples = {("ssacli", "path"), ("ssacli", "simulate"), ("web", "config_file"),
                ("web", "publish_dir")}
    lines = [line for line in _without_redfish(text).splitlines()
             if not re.match(r"(simulate|path|config_file) = ", line)]
    live = tmp_path / "config.toml"
    live.write_text("\n".join(lines), encoding="utf-8")
    config = load_config(live)  # unknown keys or bad values raise ConfigError
    defaults = Config()
    shown = 0
    section = None
    for line in text.splitlines():
        header = re.fullmatch(r"\[([a-z_]+)\]", line)
        if header:
            section = header.group(1)
            continue
        key = re.match(r"([a-z_]+) = ", line)
        if not key or section in ("audit", "redfish", "probe") or (
                (section, key.group(1)) in examples):
            continue
        shown += 1
        name = key.group(1)
        value = getattr(getattr(config, section), name)
        default = getattr(getattr(defaults, section), name)
        if name == "stale_after_s":  # default None: Config.stale_after works it out
            default = defaults.stale_after
        if name == "lock_file":  # the daemon runs as root
            default = DEFAULT_SYSTEM_PATH
        assert value == default, f"[{section}] {name}: shown {value!r}, default {default!r}"
    assert shown >= 10


def _without_redfish(text: str) -> str:
    """The [redfish] and [probe] tables need files that exist (credentials, CA): checked on
    their own (the [probe] example: tests/test_probe_config.py)."""
    kept, section = [], None
    for line in text.splitlines():
        header = re.fullmatch(r"\[([a-z_]+)\]", line)
        section = header.group(1) if header else section
        if section not in ("redfish", "probe"):
            kept.append(line)
    return "\n".join(kept)


def test_the_redfish_example_shows_the_defaults_of_its_optional_keys():
    text = uncommented()
    table = text[text.index("[redfish]"):]
    shown = dict(re.findall(r"^([a-z_]+) = ([^#\n]+?)\s*(?:#.*)?$", table, re.M))
    assert {"address", "credentials_file"} <= set(shown)
    defaults = {name: field.default for name, field in RedfishSettings.model_fields.items()}
    for name in ("verify_tls", "connect_timeout_s", "read_timeout_s", "interval_s", "max_age_s"):
        assert tomllib.loads(f"v = {shown[name]}")["v"] == defaults[name], name


LOGROTATE = ROOT / "packaging" / "logrotate"


@pytest.mark.skipif(shutil.which("logrotate") is None,
                    reason="needs logrotate (apt-get install logrotate)")
def test_logrotate_never_loses_an_audit_record(tmp_path):
    """The packaged logrotate entry, pointed at a temporary audit log, forced again and again
    while the real audit writer appends: every record is in exactly one file afterwards."""
    log = tmp_path / "audit.jsonl"
    config = tmp_path / "logrotate.conf"
    text = LOGROTATE.read_text(encoding="utf-8")
    assert "copytruncate" not in text.split("{", 1)[1]
    config.write_text(text.replace("/var/lib/smartarray-agent/audit.jsonl", str(log)),
                      encoding="utf-8")
    records = 1500
    audit = AuditLog(log, to_syslog=False, user="test")
    first = threading.Event()

    def write() -> None:
        for number in range(records):
            audit.record({"event": "test", "n": number})
            first.set()

    writer = threading.Thread(target=write)
    writer.start()
    first.wait(timeout=60)
    rotations = 0
    while writer.is_alive():
        result = subprocess.run(["logrotate", "-f", "-s", str(tmp_path / "state"), str(config)],
                                capture_output=True, text=True, timeout=60)
        # Two forced rotations within one second would share a dateext name: logrotate skips
        # the second and says so. No other complaint is expected.
        assert result.returncode == 0 or "already exists" in result.stderr, result.stderr
        rotations += result.returncode == 0
    writer.join()
    files = sorted(tmp_path.glob("audit.jsonl*"))
    assert rotations and len(files) >= 2, files
    numbers = []
    for path in files:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        numbers += [json.loads(line)["n"] for line in data.decode().splitlines()]
    assert sorted(numbers) == list(range(records))
