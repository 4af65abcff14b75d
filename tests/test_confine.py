"""As root, the agent and what it starts cannot signal PID 1 (issue 31 finding 2): a vendor
CLI stand-in run by `status` is refused what the same script run directly may do. Needs
root, where the question arises at all (as another user the kernel refuses anyway)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root may "
                                "signal PID 1 in the first place")

AGENT = Path(sys.executable).with_name("smartarray-agent")
# What a payload would try; signal 0 asks the kernel the same question as SIGRTMIN+4.
PROBE = """\
#!/bin/sh
for target in 1 -1; do
    if kill -0 "$target" 2>/dev/null; then echo "$target ALLOWED"; else echo "$target refused"; fi
done > "$(dirname "$0")/verdict"
echo "Error: this probe is not a controller."
exit 1
"""


def probe(tmp_path: Path) -> Path:
    script = tmp_path / "ssacli"
    script.write_text(PROBE)
    script.chmod(0o755)
    return script


def test_a_cli_started_by_the_agent_as_root_cannot_signal_pid_1(tmp_path):
    script = probe(tmp_path)
    subprocess.run([str(script)], check=False, timeout=30)
    assert (tmp_path / "verdict").read_text() == "1 ALLOWED\n-1 ALLOWED\n"  # it can tell

    (tmp_path / "verdict").unlink()
    ran = subprocess.run([str(AGENT), "status", "--cli", str(script), "--lock-file",
                          str(tmp_path / "cli.lock")], capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode != 0 and "not a controller" in ran.stderr, ran.stderr
    assert (tmp_path / "verdict").read_text() == "1 refused\n-1 refused\n"


def test_the_filtered_process_still_ends_its_own_children():
    code = """
import os, signal, subprocess
from smartarray_agent.common.confine import keep_away_from_init
keep_away_from_init()
for call in (lambda: os.kill(1, 0), lambda: os.pidfd_open(1),
             lambda: signal.pidfd_send_signal(os.open("/proc/1", os.O_RDONLY), 0)):
    try:
        call()
        print("allowed")
    except PermissionError:
        print("refused")
child = subprocess.Popen(["sleep", "60"], start_new_session=True)
os.killpg(child.pid, signal.SIGTERM)
print(child.wait())
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.split() == ["refused", "refused", "refused", "-15"], done.stderr


# PID 1 of a private PID namespace, as systemd is: the leader of its session and process
# group, taking SIGRTMIN+4 (poweroff for systemd) when it comes. It starts the payload once
# per way of making PID 1 (or its group) a file's signal owner, and says whether the payload
# was let and whether the signal reached it.
PID1 = """
import os, signal, subprocess, sys
os.setsid()
power_off = signal.SIGRTMIN + 4
signal.pthread_sigmask(signal.SIG_BLOCK, {power_off})  # kept pending: asked below
for way in sys.argv[2:]:
    said = subprocess.run([sys.executable, "-c", sys.argv[1], way], capture_output=True,
                          text=True).stdout.strip() or "crashed"
    got = signal.sigtimedwait({power_off}, 0) is not None
    print(way, said, "signalled" if got else "untouched")
"""
# A child of the root agent: makes the owner of a socket's I/O signal PID 1 (or process
# group 1, or itself), picks SIGRTMIN+4 with F_SETSIG, then does I/O on it.
PAYLOAD = """
import fcntl, os, signal, socket, struct, sys
from smartarray_agent.common.confine import keep_away_from_init
if os.environ.get("CONFINED"):
    keep_away_from_init()
F_SETOWN_EX, F_OWNER_PID, F_OWNER_PGRP, FIOSETOWN, SIOCSPGRP = 15, 1, 2, 0x8901, 0x8902
ways = {
    "F_SETOWN": lambda fd: fcntl.fcntl(fd, fcntl.F_SETOWN, 1),
    "F_SETOWN-pgrp": lambda fd: fcntl.fcntl(fd, fcntl.F_SETOWN, -1),
    "F_SETOWN_EX": lambda fd: fcntl.fcntl(fd, F_SETOWN_EX, struct.pack("ii", F_OWNER_PID, 1)),
    "F_SETOWN_EX-pgrp": lambda fd: fcntl.fcntl(fd, F_SETOWN_EX,
                                               struct.pack("ii", F_OWNER_PGRP, 1)),
    "FIOSETOWN": lambda fd: fcntl.ioctl(fd, FIOSETOWN, struct.pack("i", 1)),
    "SIOCSPGRP": lambda fd: fcntl.ioctl(fd, SIOCSPGRP, struct.pack("i", -1)),
    "F_SETOWN-self": lambda fd: fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid()),
}
mine, theirs = socket.socketpair()
try:
    ways[sys.argv[1]](mine.fileno())
    fcntl.fcntl(mine, fcntl.F_SETSIG, signal.SIGRTMIN + 4)
    fcntl.fcntl(mine, fcntl.F_SETFL, fcntl.fcntl(mine, fcntl.F_GETFL) | os.O_ASYNC)
    print("allowed")
except PermissionError:
    print("refused")
theirs.send(b"x")  # mine is readable: its owner is signalled, now
"""
WAYS = ("F_SETOWN", "F_SETOWN-pgrp", "F_SETOWN_EX", "F_SETOWN_EX-pgrp", "FIOSETOWN",
        "SIOCSPGRP", "F_SETOWN-self")


def _as_pid_1_sees_it(confined: bool) -> list[str]:
    env = {**os.environ, "CONFINED": "1" if confined else ""}
    done = subprocess.run(["unshare", "--pid", "--fork", "--kill-child", sys.executable, "-c",
                           PID1, PAYLOAD, *WAYS], capture_output=True, text=True, timeout=60,
                          env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_a_confined_process_cannot_make_pid_1_its_signal_owner():
    """Issue 39 item 5: F_SETOWN/F_SETOWN_EX to PID 1 or its group, or FIOSETOWN/SIOCSPGRP,
    then F_SETSIG and I/O, signalled PID 1 of a private PID namespace; the filter refuses the
    owner, and a process may still own its own files' signals."""
    assert _as_pid_1_sees_it(confined=False) == [  # the test can tell
        f"{way} allowed {'untouched' if way.endswith('self') else 'signalled'}"
        for way in WAYS]
    assert _as_pid_1_sees_it(confined=True) == [
        f"{way} {'allowed' if way.endswith('self') else 'refused'} untouched" for way in WAYS]


def _seccomp_filters(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("Seccomp_filters:")[1].split()[0])


def test_the_daemon_is_confined_from_its_start_before_any_cli(tmp_path):
    """`run` serves HTTP before its first collection: the filter is on from its start, once."""
    from .agent_process import AgentProcess, simulated

    agent = AgentProcess(tmp_path, simulated(tmp_path, "gen9-battery")).start()
    try:
        assert agent.process is not None
        assert _seccomp_filters(agent.process.pid) == _seccomp_filters(os.getpid()) + 1
    finally:
        agent.kill()


def test_the_agent_used_as_a_library_never_confines_its_caller():
    """Only the program confines itself: a process (a test, say) that runs the vendor CLI
    through the agent's code in-process is left as it was, and so are its other children."""
    code = """
from smartarray_agent.collectors.ssacli.discover import VendorCli
VendorCli(("/bin/true",), "ssacli").run([], timeout_s=60)
status = open("/proc/self/status").read()
print(int(status.split("Seccomp_filters:")[1].split()[0]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.split() == [str(_seccomp_filters(os.getpid()))], done.stderr
