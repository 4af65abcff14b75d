"""systemd/: the units verify clean with systemd-analyze, their exposure stays at 3.0 or
lower, and what they promise matches the program (the command line, the lock, the audit log,
the configuration's timeouts)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from smartarray_agent.cli import exitcodes
from smartarray_agent.cli.options import PROG
from smartarray_agent.collectors.ssacli.lock import DEFAULT_SYSTEM_PATH
from smartarray_agent.config import DEFAULT_PATH, Config, load_config
from smartarray_agent.locations import AUDIT_FILE

from .agent_cli import agent, commands

ROOT = Path(__file__).resolve().parent.parent
SYSTEMD = ROOT / "systemd"
UNITS = ["smartarray-agent.service", "smartarray-agent-textfile.service",
         "smartarray-agent-textfile.timer"]
SERVICES = UNITS[:2]
PACKAGED_BINARY = "/opt/smartarray-agent/bin/smartarray-agent"
EXPOSURE_TARGET = 3.0

ANALYZE = shutil.which("systemd-analyze")


def _analyze_unusable() -> str | None:
    """Why systemd-analyze cannot check a unit here, or None. Run as non-root where no
    systemd has booted (an unbooted container), it fails on every unit: it cannot create
    /run/systemd/."""
    if ANALYZE is None:
        return "systemd-analyze is not installed (apt-get install systemd)"
    if os.geteuid() == 0 or os.path.isdir("/run/systemd"):
        return None
    return ("systemd-analyze cannot create /run/systemd/ as non-root where no systemd has "
            "booted: run the tests as root or on a booted system")


needs_analyze = pytest.mark.skipif(_analyze_unusable() is not None,
                                   reason=_analyze_unusable() or "")


def directives(unit: str) -> dict[str, list[str]]:
    """``Section.Key -> [values]`` of a unit file (systemd allows a key more than once)."""
    found: dict[str, list[str]] = {}
    section = ""
    for line in (SYSTEMD / unit).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        found.setdefault(f"{section}.{key}", []).append(value)
    return found


def one(unit: str, key: str) -> str:
    values = directives(unit)[key]
    assert len(values) == 1, f"{unit} {key}: {values}"
    return values[0]


def seconds(value: str) -> float:
    match = re.fullmatch(r"(\d+)(s|min|m)?", value)
    assert match, value
    return int(match.group(1)) * (60 if match.group(2) in ("min", "m") else 1)


def units_for_analysis(tmp_path: Path) -> Path:
    """Copies of the units whose ExecStart names an existing program (verify checks that it
    exists; /opt/smartarray-agent only exists where the package is installed)."""
    here = Path(sys.executable).parent / "smartarray-agent"
    program = here if here.exists() else Path(shutil.which("smartarray-agent") or "/bin/true")
    out = tmp_path / "units"
    out.mkdir()
    for unit in UNITS:
        text = (SYSTEMD / unit).read_text(encoding="utf-8")
        (out / unit).write_text(text.replace(PACKAGED_BINARY, str(program)), encoding="utf-8")
    return out


def man_path(tmp_path: Path) -> Path:
    """A MANPATH holding the generated smartarray-agent(8), for the units' Documentation=."""
    page = tmp_path / "man" / "man8" / "smartarray-agent.8"
    page.parent.mkdir(parents=True)
    subprocess.run([sys.executable, str(ROOT / "packaging" / "manpage.py"), str(page)],
                   check=True, timeout=60)
    return page.parent.parent


@needs_analyze
def test_systemd_analyze_verify_is_clean(tmp_path):
    units = units_for_analysis(tmp_path)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
    man_check = "--man=yes"
    if shutil.which("man"):
        env["MANPATH"] = str(man_path(tmp_path))
    else:
        man_check = "--man=no"
    result = subprocess.run(
        [ANALYZE, "verify", man_check, *(str(units / u) for u in UNITS)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout + result.stderr == ""


@needs_analyze
@pytest.mark.parametrize("unit", SERVICES)
def test_exposure_is_at_most_three(tmp_path, unit):
    units = units_for_analysis(tmp_path)
    result = subprocess.run(
        [ANALYZE, "security", "--offline=true", "--no-pager", str(units / unit)],
        capture_output=True, text=True, timeout=120,
    )
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
    assert match, result.stdout + result.stderr
    exposure = float(match.group(1))
    print(f"{unit}: exposure {exposure}")
    assert exposure <= EXPOSURE_TARGET


def test_the_daemon_unit_is_a_watched_notify_service():
    unit = "smartarray-agent.service"
    assert one(unit, "Service.Type") == "notify"
    assert one(unit, "Service.NotifyAccess") == "main"
    assert one(unit, "Service.Restart") == "on-failure"
    assert one(unit, "Install.WantedBy") == "multi-user.target"


def test_the_watchdog_outlasts_one_slow_collection():
    """WATCHDOG=1 comes once per round: the watchdog must not fire while a round, as
    configured by default, waits for the lock and then for two CLI calls that each end at their
    timeout, with room left for the iLO."""
    unit = "smartarray-agent.service"
    watchdog = seconds(one(unit, "Service.WatchdogSec"))
    defaults = Config()
    slowest_round = (defaults.ssacli.lock_wait_s + 2 * defaults.ssacli.timeout_s
                     + defaults.collect.interval_s)
    assert watchdog >= 1.5 * slowest_round
    assert seconds(one(unit, "Service.TimeoutStartSec")) >= watchdog


@pytest.mark.parametrize("unit", SERVICES)
def test_hardening(unit):
    d = directives(unit)
    expected = {
        "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
        "NoNewPrivileges": "yes", "CapabilityBoundingSet": "CAP_SYS_RAWIO",
        "DevicePolicy": "closed", "DeviceAllow": "char-sg rw",
        "RuntimeDirectory": "smartarray-agent", "RuntimeDirectoryPreserve": "yes",
        "StateDirectory": "smartarray-agent", "ProtectKernelModules": "yes",
        "RestrictSUIDSGID": "yes", "SystemCallArchitectures": "native",
    }
    for key, value in expected.items():
        assert d[f"Service.{key}"] == [value], key
    # PrivateDevices= would hide /dev/sg* and drop CAP_SYS_RAWIO: the CLI would see nothing.
    assert "Service.PrivateDevices" not in d


def test_the_lock_and_the_audit_log_live_in_the_units_directories():
    assert DEFAULT_SYSTEM_PATH.parent == Path("/run") / one(
        "smartarray-agent.service", "Service.RuntimeDirectory")
    state = Path("/var/lib") / one("smartarray-agent.service", "Service.StateDirectory")
    assert Path(AUDIT_FILE).parent == state
    packaged = load_config(ROOT / "packaging" / "config.toml")
    assert packaged.audit.file.parent == state, "the daemon may only write its state directory"


def test_only_the_textfile_service_writes_the_textfile_directory():
    daemon = directives("smartarray-agent.service")
    textfile = directives("smartarray-agent-textfile.service")
    env = dict(v.split("=", 1) for v in textfile["Service.Environment"])
    directory = env["TEXTFILE_DIR"]
    writable = textfile["Service.ReadWritePaths"]
    assert f"-{directory}" in writable
    assert all(path.startswith("-/var/opt/") or path == f"-{directory}" for path in writable)
    assert not any(directory in path for path in daemon.get("Service.ReadWritePaths", []))


def _arguments(unit: str) -> list[str]:
    exec_start = one(unit, "Service.ExecStart").split()
    assert exec_start[0] == PACKAGED_BINARY
    return exec_start[1:]


@pytest.mark.parametrize("unit", SERVICES)
def test_execstart_is_a_valid_command_line(unit):
    """The ExecStart arguments parse with the real command (without running it)."""
    arguments = _arguments(unit)
    assert arguments[arguments.index("--config") + 1] == str(DEFAULT_PATH)
    command = dict((" ".join(path), command) for path, command in commands())[arguments[0]]
    values = [a.replace("${TEXTFILE_DIR}", "/var/lib/prometheus/node-exporter")
              for a in arguments[1:]]
    parsed = command.make_context(f"{PROG} {arguments[0]}", values)
    assert parsed.params["config"] == DEFAULT_PATH


@pytest.mark.parametrize("unit", ["smartarray-agent.service", "smartarray-agent-serve.service"])
def test_a_reload_of_a_configuration_that_does_not_load_fails(tmp_path, unit):
    """``systemctl reload`` runs the ExecReload= lines in turn and fails at the first that
    fails (issue #48 item 5): the configuration the daemon (or serve) would load is checked
    by the same code (``config check``), and only one that loads reaches it as SIGHUP. A
    broken one makes the reload fail, with the problem in the unit's journal, and the
    process keeps its running configuration."""
    *checks, signal = directives(unit)["Service.ExecReload"]
    assert signal == "/bin/sh -c 'kill -HUP $$MAINPID'"
    check = checks[0].split()
    assert len(checks) == 1 and check[:3] == [PACKAGED_BINARY, "config", "check"]
    assert check[3:] == _arguments(unit)[2:] == [str(DEFAULT_PATH)]
    broken = tmp_path / "config.toml"
    broken.write_text("[collect]\ninterval_s = -1\n")
    refused = agent(*check[1:3], broken)
    assert refused.returncode == exitcodes.BAD_INPUT
    assert refused.stdout.startswith(f"{broken}:2: collect.interval_s: "), refused.stdout
    broken.write_text("[collect]\ninterval_s = 30\n")
    assert agent(*check[1:3], broken).returncode == 0


def test_the_timer_runs_the_textfile_service_every_minute():
    assert one("smartarray-agent-textfile.timer", "Timer.OnUnitActiveSec") == "60s"
    assert one("smartarray-agent-textfile.timer", "Install.WantedBy") == "timers.target"
    assert one("smartarray-agent-textfile.service", "Service.Type") == "oneshot"
    assert "Install.WantedBy" not in directives("smartarray-agent-textfile.service")


def textfile_successes() -> set[int]:
    """The exit codes systemd counts as a success of the textfile unit."""
    return {0, *(int(code) for value in
                 directives("smartarray-agent-textfile.service")["Service.SuccessExitStatus"]
                 for code in value.split())}


def test_a_crashing_textfile_run_fails_the_unit(tmp_path):
    """A Python exception (exit 1) is not a success any more (issue 15): here the file
    cannot be put in place because a directory stands at its name."""
    config = tmp_path / "config.toml"
    config.write_text(f'[ssacli]\nsimulate = "gen9-battery"\nlock_file = "{tmp_path}/cli.lock"\n'
                      "[sysfs]\nenabled = false\n")
    (tmp_path / "textfile" / "smartarray.prom").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "smartarray_agent", "metrics", "--config", str(config),
         "--textfile", str(tmp_path / "textfile")], capture_output=True, text=True,
        timeout=120, env={**os.environ, "SMARTARRAY_SIM_STATE_DIR": str(tmp_path / "sim")})
    assert done.returncode == 1 and "IsADirectoryError" in done.stderr, done.stderr
    assert textfile_successes() == {0, exitcodes.COLLECTOR_FAILED}
    assert done.returncode not in textfile_successes()


def test_the_textfile_service_is_harmless_without_node_exporter_or_a_cli(tmp_path):
    """Skipped (not failed) without the textfile directory it writes to, and not failed when
    the file was written but a collector failed: with no vendor CLI, ``metrics --textfile``
    writes collector success 0 and exits COLLECTOR_FAILED, which the unit counts as success."""
    textfile = directives("smartarray-agent-textfile.service")
    directory = dict(v.split("=", 1) for v in textfile["Service.Environment"])["TEXTFILE_DIR"]
    assert textfile["Unit.ConditionPathIsDirectory"] == [directory]
    assert one("smartarray-agent-textfile.service", "Service.SuccessExitStatus") == str(
        exitcodes.COLLECTOR_FAILED)
    config = tmp_path / "config.toml"
    config.write_text("[sysfs]\nenabled = false\n")
    empty = tmp_path / "bin"
    empty.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "smartarray_agent", "metrics", "--config", str(config),
         "--textfile", str(tmp_path)],
        capture_output=True, text=True, timeout=120, env={"PATH": str(empty), "LANG": "C.UTF-8"})
    if "no Smart Array CLI found" not in done.stderr:
        pytest.skip(f"a vendor CLI is installed here: {done.stderr.strip()}")
    assert done.returncode in textfile_successes(), done.stderr
    written = (tmp_path / "smartarray.prom").read_text()
    assert 'smartarray_collector_success{collector="ssacli"} 0.0' in written


def test_modules_load_d_loads_sg():
    lines = (SYSTEMD / "modules-load.d" / "smartarray-agent.conf").read_text().splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == ["sg"]


def test_the_man_page_quotes_the_units_watchdog():
    page = (ROOT / "packaging" / "smartarray-agent.8.in").read_text(encoding="utf-8")
    quoted = re.findall(r"WatchdogSec=(\w+)", page)
    assert quoted == [one("smartarray-agent.service", "Service.WatchdogSec")]
