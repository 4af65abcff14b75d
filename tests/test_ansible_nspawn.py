"""The role smartarray.agent.smartarray_agent applied twice to a booted Debian 12 container:
the .deb built from this checkout installed by apt, config.toml and the web config written, the
daemon enabled and running and publishing its page as the package sets it up, the
unprivileged smartarray-agent-serve answering /metrics over TLS with basic auth (root's key
handed to it by LoadCredential=), a file_sd target on the controller; the second run
changes nothing.

Ansible reaches the container through its interpreter: a wrapper that runs the container's
python3.11 in the container's namespaces (nsenter), with pipelining, and a temporary
directory bound at the same path inside and out for the files the copy and template actions
send. The Debian root (systemd, python3.11, python3-apt: the apt module needs it) is made once
with debootstrap and cached in $SMARTARRAY_CI_CACHE (default /var/cache/smartarray-agent-ci).

Needs root, debootstrap, systemd-nspawn, nsenter and what packaging/build-deb.sh needs; marked
``nspawn`` like tests/test_packaging_nspawn.py (``-m "not nspawn"`` leaves it out)."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import bcrypt
import pytest

from tests.run_once import build_once
from tests.test_ansible import BIN, REPO, ansible_env, recap
from tests.test_packaging_build import build_package

pytestmark = pytest.mark.nspawn

CACHE = Path(os.environ.get("SMARTARRAY_CI_CACHE", "/var/cache/smartarray-agent-ci"))
MIRROR = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian")
# The .deb's dependencies the minbase lacks (the container has no network to fetch them):
# python3.11, logrotate.
PACKAGES = "systemd,systemd-sysv,dbus,python3.11,logrotate,python3-apt"
RECIPE = f"bookworm minbase {PACKAGES}"
BASE = CACHE / "bookworm-ansible"
MARKER = BASE / ".smartarray-ci-complete"
TOOLS = ("systemd-nspawn", "debootstrap", "nsenter", "dpkg-deb")
OWN_CGROUP = REPO / "packaging" / "nspawn" / "own-cgroup.sh"

PLAY = """\
- hosts: debian12
  gather_facts: false
  roles:
    - smartarray.agent.smartarray_agent
"""

# /metrics from inside the container (its network is private), over TLS with basic auth.
FETCH = """\
import ssl, sys, urllib.request
context = ssl.create_default_context(cafile=sys.argv[2])
request = urllib.request.Request("https://127.0.0.1:9712/metrics",
                                 headers={"Authorization": "Basic " + sys.argv[1]})
print(urllib.request.urlopen(request, timeout=5, context=context).read().decode())
"""
# /probe from inside the container: plain HTTP (no web config on the probe node), the query
# the probe job sends.
PROBE = """\
import sys, urllib.request
url = "http://127.0.0.1:9712/probe?target=" + sys.argv[1] + "&module=default"
print(urllib.request.urlopen(url, timeout=15).read().decode())
"""
# A fake iLO in the container (its network is private): tests/redfish_ilo.py serving the iLO 5
# tree of the simulator's gen10 host on 127.0.0.1, with a certificate made outside; it writes
# its address to the shared directory and serves until the container stops.
FAKE_ILO = """\
import sys, threading
from pathlib import Path
shared = Path(sys.argv[1])
sys.path.insert(0, str(shared))
import redfish_ilo
redfish_ilo.certificate = lambda: (shared / "ilo.pem", shared / "ilo.key")
redfish_ilo.DATA = shared / "redfish_data"
with redfish_ilo.serve(redfish_ilo.Ilo(redfish_ilo.tree(redfish_ilo.ILO5_TREE))) as ilo:
    (shared / "ilo-address").write_text(ilo.address)
    threading.Event().wait()
"""
TLS = REPO / "tests" / "tls"
CERT, KEY = "/etc/ssl/certs/smartarray-test.crt", "/etc/ssl/private/smartarray-test.key"


def wait_for(condition, timeout: float, what: str):
    """Poll ``condition`` until it returns something true; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}")


def debian_root() -> Path:
    """The cached Debian 12 root, made with debootstrap under the cache lock when missing."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not MARKER.exists() or MARKER.read_text().strip() != RECIPE:
            shutil.rmtree(BASE, ignore_errors=True)
            log = CACHE / "debootstrap-ansible.log"
            with open(log, "w") as output:
                done = subprocess.run(
                    ["debootstrap", "--variant=minbase", f"--include={PACKAGES}", "bookworm",
                     str(BASE), MIRROR], stdout=output, stderr=subprocess.STDOUT, timeout=1800)
            assert done.returncode == 0, log.read_text()[-3000:]
            (BASE / "etc" / "hostname").write_text("smartarray-ci\n")
            MARKER.write_text(RECIPE + "\n")
    return BASE


class Container:
    def __init__(self, leader: int, shared: Path) -> None:
        self.leader = leader
        self.shared = shared

    def run(self, *argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(["nsenter", "-t", str(self.leader), "-a", *argv],
                              capture_output=True, text=True, timeout=120)


@pytest.fixture
def container(tmp_path) -> Iterator[Container]:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"needs root and {', '.join(missing) or 'nothing else'}"
                    " (apt-get install systemd-container debootstrap)")
    base = debian_root()
    root, upper, work = tmp_path / "root", tmp_path / "upper", tmp_path / "ovlwork"
    shared = tmp_path / "shared"
    for directory in (root, upper, work, shared):
        directory.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "overlay", "overlay", "-o",
         f"lowerdir={base},upperdir={upper},workdir={work}", str(root)]).returncode == 0
    if not mounted:
        subprocess.run(["cp", "-a", f"{base}/.", f"{root}/"], check=True)
    # In a cgroup of its own, as packaging/nspawn/lib.sh boots one: with --keep-unit a
    # container runs in its caller's.
    with open(tmp_path / "console.log", "w") as console:
        machine = subprocess.Popen(
            [str(OWN_CGROUP), "systemd-nspawn", "-q", "-D", str(root), "-M",
             f"saans-{os.getpid()}", "--boot",
             "--register=no", "--keep-unit", "--private-network", f"--bind={shared}",
             "--console=pipe"], stdin=subprocess.DEVNULL, stdout=console,
            stderr=subprocess.STDOUT)
    try:
        leader = wait_for(lambda: _systemd_child(machine.pid), 30, "the container's systemd")
        ct = Container(leader, shared)
        wait_for(lambda: ct.run("systemctl", "is-system-running").stdout.strip()
                 in ("running", "degraded"), 120, "the container to boot")
        yield ct
    finally:
        leader = _systemd_child(machine.pid)
        if machine.poll() is None and leader is not None:
            subprocess.run(["nsenter", "-t", str(leader), "-a", "systemctl", "poweroff"],
                           capture_output=True)
        try:
            machine.wait(timeout=30)
        except subprocess.TimeoutExpired:
            machine.kill()  # the nspawn process this fixture started
            machine.wait()
        if mounted:
            subprocess.run(["umount", str(root)])


def _systemd_child(pid: int) -> int | None:
    found = subprocess.run(["pgrep", "-P", str(pid), "-x", "systemd"],
                           capture_output=True, text=True).stdout.split()
    return int(found[0]) if found else None


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> Path:
    """The .deb of this host's release (Debian 12's, for the container's python3.11), the one
    tests/test_packaging_build.py reads: built once in the test run."""
    return build_once(tmp_path_factory, "deb", lambda out: build_package("build-deb.sh", out))


def role_runner(tmp_path: Path, container: Container, variables: dict):
    """A function that applies the role to the container with ``variables`` and returns the
    PLAY RECAP counts."""
    shared = container.shared
    interpreter = shared / "python"
    interpreter.write_text(
        "#!/bin/sh\n"
        f"exec nsenter -t {container.leader} -a env -i "
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "
        '/usr/bin/python3.11 "$@"\n')
    interpreter.chmod(0o755)
    (tmp_path / "inventory.ini").write_text(
        f"debian12 ansible_connection=local ansible_python_interpreter={interpreter}\n")
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    (tmp_path / "play.yml").write_text(PLAY)
    env = ansible_env(tmp_path)
    env.pop("ANSIBLE_PYTHON_INTERPRETER")  # the inventory's, for the container
    env.update({"ANSIBLE_PIPELINING": "1", "ANSIBLE_REMOTE_TEMP": str(shared / "tmp")})

    def apply() -> dict[str, int]:
        return recap(subprocess.run(
            [str(BIN / "ansible-playbook"), "-i", str(tmp_path / "inventory.ini"),
             str(tmp_path / "play.yml"), "-e", f"@{tmp_path / 'vars.json'}"],
            capture_output=True, text=True, env=env, timeout=900, stdin=subprocess.DEVNULL),
            "debian12")

    return apply


def apply_twice(apply) -> None:
    first = apply()
    assert first["changed"] >= 5 and first["failed"] == 0
    second = apply()
    print(f"first run: {first}\nsecond run: {second}")
    assert second["changed"] == 0 and second["failed"] == 0


def unit_state(container: Container, unit: str) -> tuple[str, str]:
    """(is-active, is-enabled) of ``unit`` in the container."""
    return (container.run("systemctl", "is-active", unit).stdout.strip(),
            container.run("systemctl", "is-enabled", unit).stdout.strip())


def test_the_role_twice_on_a_booted_debian_12(tmp_path, container, deb):
    hashed = bcrypt.hashpw(b"scrape-secret", bcrypt.gensalt(rounds=4)).decode()
    file_sd = tmp_path / "file_sd"
    file_sd.mkdir()
    # The certificate and root's key, already on the host as the role expects them.
    for source, target, mode in ((TLS / "server.crt", CERT, "0644"),
                                 (TLS / "server.key", KEY, "0600")):
        shutil.copyfile(source, container.shared / source.name)
        placed = container.run("install", "-D", "-m", mode, "-o", "root", "-g", "root",
                               str(container.shared / source.name), target)
        assert placed.returncode == 0, placed.stderr
    apply_twice(role_runner(tmp_path, container, {
        "smartarray_agent_package_path": str(deb),
        "smartarray_agent_simulate": "gen9-battery",
        "smartarray_agent_tls_cert_file": CERT,
        "smartarray_agent_tls_key_file": KEY,
        "smartarray_agent_basic_auth_users": {"prometheus": hashed},
        "smartarray_agent_file_sd_dir": str(file_sd),
    }))

    assert unit_state(container, "smartarray-agent.service") == ("active", "enabled")
    assert unit_state(container, "smartarray-agent-serve.service") == ("active", "enabled")
    assert unit_state(container, "smartarray-agent-textfile.timer")[1] != "enabled"
    # The root daemon listens on nothing: the one listener is serve's dynamic user.
    listener = container.run("python3.11", "-c", "import socket; socket.create_server("
                             "('127.0.0.1', 9712)).close()")
    assert "Address already in use" in listener.stderr
    serving = container.run("systemctl", "show", "-p", "MainPID", "--value",
                            "smartarray-agent-serve.service").stdout.strip()
    owner = container.run("stat", "-c", "%u", f"/proc/{serving}").stdout.strip()
    assert owner not in ("", "0"), (serving, owner)
    checked = container.run("/opt/smartarray-agent/bin/smartarray-agent", "config", "check",
                            "/etc/smartarray-agent/config.toml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    auth = base64.b64encode(b"prometheus:scrape-secret").decode()

    def metrics() -> str:
        answer = container.run("/usr/bin/python3.11", "-c", FETCH, auth, CERT)
        return answer.stdout if "smartarray_controller_info{" in answer.stdout else ""

    body = wait_for(metrics, 60, "/metrics with the simulated controller")
    assert 'model="Smart Array P440ar"' in body
    refused = container.run("/usr/bin/python3.11", "-c", FETCH,
                            base64.b64encode(b"prometheus:wrong").decode(), CERT)
    assert refused.returncode != 0 and "401" in refused.stderr
    targets = json.loads((file_sd / "debian12.json").read_text())
    assert targets == [{"targets": ["debian12:9712"], "labels": {}}]


def test_a_probe_node_reads_an_ilo_with_the_login_the_role_hands_serve(tmp_path, container,
                                                                       deb):
    """Issue 27 item 3: the role's [probe] table, module login and LoadCredential= drop-in
    let serve's dynamic user log in to an iLO (a fake one in the container) for /probe."""
    from tests import redfish_ilo

    shared = container.shared
    shutil.copyfile(REPO / "tests" / "redfish_ilo.py", shared / "redfish_ilo.py")
    shutil.copytree(redfish_ilo.DATA, shared / "redfish_data")
    cert, key = redfish_ilo.certificate()
    shutil.copyfile(cert, shared / "ilo.pem")
    shutil.copyfile(key, shared / "ilo.key")
    started = container.run("systemd-run", "--unit=fake-ilo", "/usr/bin/python3.11", "-c",
                            FAKE_ILO, str(shared))
    assert started.returncode == 0, started.stderr
    address = wait_for(lambda: (shared / "ilo-address").exists()
                       and (shared / "ilo-address").read_text(), 30, "the fake iLO")
    ca_file = "/etc/ssl/certs/fake-ilo.pem"
    placed = container.run("install", "-D", "-m", "0644", str(shared / "ilo.pem"), ca_file)
    assert placed.returncode == 0, placed.stderr
    file_sd = tmp_path / "file_sd"
    file_sd.mkdir()
    apply_twice(role_runner(tmp_path, container, {
        "smartarray_agent_package_path": str(deb),
        "smartarray_agent_simulate": "gen9-battery",
        "smartarray_agent_probe_targets": [address],
        "smartarray_agent_probe_modules": {"default": {
            "username": redfish_ilo.USER, "password": redfish_ilo.PASSWORD,
            "ca_file": ca_file}},
        "smartarray_agent_probe_file_sd_path": str(file_sd / "ilo.json"),
    }))

    assert unit_state(container, "smartarray-agent-serve.service") == ("active", "enabled")

    def probed() -> str:
        answer = container.run("/usr/bin/python3.11", "-c", PROBE, address)
        read = re.search(r"^smartarray_probe_success 1(\.0)?$", answer.stdout, re.M)
        return answer.stdout if read else ""

    try:
        body = wait_for(probed, 60, "/probe reading the fake iLO")
    except BaseException:
        print(container.run("journalctl", "-u", "smartarray-agent-serve", "-n", "30").stdout)
        raise
    assert redfish_ilo.GEN10_SERIAL in body
    dropin = container.run("systemctl", "cat", "smartarray-agent-serve.service").stdout
    assert ("LoadCredential=probe-default-credentials.toml:"
            "/etc/smartarray-agent/probe-default-credentials.toml") in dropin
    assert f"LoadCredential=fake-ilo.pem:{ca_file}" in dropin
    assert json.loads((file_sd / "ilo.json").read_text()) == [
        {"targets": [address], "labels": {"__param_module": "default"}}]


def test_the_role_in_textfile_mode_on_a_booted_debian_12(tmp_path, container, deb):
    textfile_dir = "/var/lib/node_exporter/textfile_collector"  # not the unit's default
    apply_twice(role_runner(tmp_path, container, {
        "smartarray_agent_package_path": str(deb),
        "smartarray_agent_simulate": "gen9-battery",
        "smartarray_agent_mode": "textfile",
        "smartarray_agent_textfile_dir": textfile_dir,
        "smartarray_agent_file_sd_dir": str(tmp_path),
    }))

    assert unit_state(container, "smartarray-agent.service") == ("inactive", "disabled")
    assert unit_state(container, "smartarray-agent-serve.service") == ("inactive", "disabled")
    assert unit_state(container, "smartarray-agent-textfile.timer") == ("active", "enabled")
    assert not (tmp_path / "debian12.json").exists()  # no listener, no scrape target
    # One run of the service the timer starts writes the metrics where the role said.
    started = container.run("systemctl", "start", "smartarray-agent-textfile.service")
    assert started.returncode == 0, started.stderr
    written = container.run("cat", f"{textfile_dir}/smartarray.prom")
    assert 'smartarray_controller_info{' in written.stdout, written.stderr
