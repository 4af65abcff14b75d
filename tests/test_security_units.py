"""The units of issue 17's privilege separation: the unprivileged endpoint
(smartarray-agent-serve.service) verifies clean and rates lower than the root daemon, every
unit (the root textfile run included) keeps PID 1, D-Bus and the host's secrets out of
reach, and the publish directory of the tmpfiles.d entry is the one the units and the docs
name. That these hold under a real
systemd is tests/test_security_nspawn.py's."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from .test_packaging_units import ANALYZE, PACKAGED_BINARY, SYSTEMD, directives, needs_analyze

SERVE = "smartarray-agent-serve.service"
DAEMON = "smartarray-agent.service"
TEXTFILE = "smartarray-agent-textfile.service"
PUBLISH_DIR = "/run/smartarray-agent-metrics"
HIDDEN = {"/run/systemd/private", "/run/dbus/system_bus_socket", "/etc/shadow", "/etc/shadow-",
          "/etc/gshadow", "/etc/gshadow-", "/etc/ssh", "/etc/sudoers", "/etc/sudoers.d"}


def inaccessible(unit: str) -> set[str]:
    return {path.lstrip("-") for value in directives(unit).get("Service.InaccessiblePaths", [])
            for path in value.split()}


def copy_for_analysis(tmp_path: Path, unit: str) -> Path:
    copy = tmp_path / unit
    copy.write_text((SYSTEMD / unit).read_text().replace(PACKAGED_BINARY, "/bin/true"))
    return copy


def verified_exposure(tmp_path: Path, unit: str) -> float:
    """``systemd-analyze verify`` says nothing of ``unit``; its ``security`` exposure level."""
    copy = copy_for_analysis(tmp_path, unit)
    verify = subprocess.run([ANALYZE, "verify", "--man=no", str(copy)],
                            capture_output=True, text=True, timeout=120)
    assert (verify.returncode, verify.stdout + verify.stderr) == (0, "")
    result = subprocess.run([ANALYZE, "security", "--offline=true", "--no-pager", str(copy)],
                            capture_output=True, text=True, timeout=120)
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
    assert match, result.stdout + result.stderr
    return float(match.group(1))


@needs_analyze
def test_the_serving_unit_verifies_and_rates_lower_than_the_daemon(tmp_path):
    exposure = {unit: verified_exposure(tmp_path, unit) for unit in (SERVE, DAEMON)}
    print(exposure)
    assert exposure[SERVE] <= 2.0 and exposure[SERVE] < exposure[DAEMON]


@pytest.mark.parametrize("unit", [SERVE, DAEMON, TEXTFILE])
def test_pid_1_d_bus_and_secrets_are_out_of_reach(unit):
    assert inaccessible(unit) >= HIDDEN


@pytest.mark.parametrize("unit", [SERVE, DAEMON])
def test_the_listening_units_bound_their_descriptors(unit):
    """Bounded, with room for the endpoint's connections and as many TLS handshakes."""
    from smartarray_agent.exporter.server import FD_RESERVE, MAX_CONNECTIONS

    [limit] = directives(unit)["Service.LimitNOFILE"]
    assert 2 * MAX_CONNECTIONS + FD_RESERVE <= int(limit) <= 65536


def test_every_root_unit_hides_what_the_daemon_hides():
    """The daemon's list is the reference: a path added there and not to the textfile run's
    unit (also root, also the vendor CLI and the iLO) fails here."""
    assert inaccessible(TEXTFILE) >= inaccessible(DAEMON)


@needs_analyze
def test_the_textfile_unit_verifies_and_rates_no_worse_than_the_daemon(tmp_path):
    exposure = {unit: verified_exposure(tmp_path, unit) for unit in (TEXTFILE, DAEMON)}
    print(exposure)
    assert exposure[TEXTFILE] <= exposure[DAEMON]


def test_the_serving_unit_holds_nothing():
    serve = directives(SERVE)
    assert serve["Service.DynamicUser"] == ["yes"]
    assert serve["Service.CapabilityBoundingSet"] == [""]
    assert serve["Service.PrivateDevices"] == ["yes"]
    assert serve["Service.RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6"]
    assert {"/run/smartarray-agent", "/var/lib/smartarray-agent"} <= inaccessible(SERVE)
    assert "Service.User" not in serve
    assert serve["Service.SupplementaryGroups"] == ["smartarray-metrics"]


def test_the_publish_directory_is_the_same_everywhere():
    tmpfiles = (SYSTEMD / "tmpfiles.d" / "smartarray-agent.conf").read_text().splitlines()
    assert f"d {PUBLISH_DIR} 2750 root smartarray-metrics -" in tmpfiles
    sysusers = (SYSTEMD / "sysusers.d" / "smartarray-agent.conf").read_text().splitlines()
    assert "g smartarray-metrics -" in sysusers
    assert f"-{PUBLISH_DIR}" in directives(DAEMON)["Service.ReadWritePaths"]
    assert f'publish_dir = "{PUBLISH_DIR}"' in (SYSTEMD / SERVE).read_text()
    assert f'publish_dir = "{PUBLISH_DIR}"' in (SYSTEMD.parent / "docs" / "privileges.md"
                                                ).read_text()
