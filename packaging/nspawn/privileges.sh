#!/usr/bin/env bash
# Privilege separation under a real systemd (issue 17): boot the .deb in a Debian 12 container
# with systemd-nspawn, as the package configures it: the root daemon publishing (the packaged
# config.toml's [web] publish_dir) and smartarray-agent-serve.service answering HTTP, and
# check that
#   1. both units are active and /metrics, served by serve, has the simulator's controller,
#   2. the serving process is not root and holds no capability; the root daemon listens on
#      nothing,
#   3. from inside each unit (an ExecStartPre= probe, in the unit's own sandbox) systemd-run is
#      refused and /etc/shadow and /etc/ssh cannot be read, while the same probe outside any
#      sandbox can do all three (so the probe can tell); the root textfile unit is started
#      once for its probe too,
#   4. PID 1 is out of reach of what the agent runs: root may signal PID 1 (SIGRTMIN+4 powers
#      the host off), and the units' sandbox alone does not stop it (the ExecStartPre probe
#      may); a vendor CLI stand-in started by the agent in each root unit may not,
#   5. serve's reload checks the configuration as serve's user, under its sandbox: a file
#      that does not load fails the reload, and serve runs on,
# and print the live `systemd-analyze security` exposure of the three units.
#
#   sudo packaging/nspawn/privileges.sh [DEB]
#
# Same needs, cache ($SMARTARRAY_CI_CACHE) and Debian root as test.sh (lib.sh, shared).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
nspawn_name=privileges
nspawn_release=bookworm
# shellcheck source=lib.sh
. "$repo/packaging/nspawn/lib.sh"
nspawn_check_tools privileges.sh

work=$(mktemp -d /tmp/smartarray-privileges.XXXXXX)
trap 'nspawn_cleanup "$work"' EXIT

nspawn_deb "${1:-}"
nspawn_prepare "$work"
nspawn_install_deb "$deb" "$work/apt.log"
[ -L "$root/etc/systemd/system/multi-user.target.wants/smartarray-agent-serve.service" ] \
    || fail "the package did not enable smartarray-agent-serve.service"

# The packaged config.toml as it is (its [web] publish_dir makes the root daemon publish),
# with the simulator in place of ssacli and a short interval.
nspawn_install_scenario gen9-battery
cat >> "$root/etc/smartarray-agent/config.toml" <<'TOML'

[ssacli]
simulate = "/etc/smartarray-agent/sim.toml"

[collect]
interval_s = 2.0
TOML
# Secrets to fail to read: the container has no sshd, so give it a host key.
install -d -m 0755 "$root/etc/ssh"
echo "not a real key" > "$root/etc/ssh/ssh_host_ed25519_key"
chmod 0600 "$root/etc/ssh/ssh_host_ed25519_key"

# What a compromised process would try first; one line per attempt.
cat > "$root/usr/local/sbin/smartarray-probe" <<'SH'
#!/bin/sh
if systemd-run --wait --quiet --collect /bin/true >/dev/null 2>&1; then r=ALLOWED; else r=refused; fi
echo "PROBE systemd-run: $r"
if head -c 1 /etc/shadow >/dev/null 2>&1; then r=READABLE; else r=unreadable; fi
echo "PROBE /etc/shadow: $r"
if head -c 1 /etc/ssh/ssh_host_ed25519_key >/dev/null 2>&1; then r=READABLE; else r=unreadable; fi
echo "PROBE /etc/ssh: $r"
if kill -0 1 2>/dev/null; then r=ALLOWED; else r=refused; fi
echo "PROBE kill PID 1: $r"
SH
chmod 0755 "$root/usr/local/sbin/smartarray-probe"
# A vendor CLI stand-in: code the agent runs, as a parser bug's payload would be. Signal 0
# asks the kernel the same permission question as SIGRTMIN+4, without the power-off.
cat > "$root/usr/local/sbin/ssacli-init-probe" <<'SH'
#!/bin/sh
if kill -0 1 2>/dev/null; then r=ALLOWED; else r=refused; fi
# In the output, which the agent logs with the failure: a line logged by this short-lived
# process itself may reach the journal without its unit (journald reads that from /proc).
echo "Error: this probe is not a controller; kill PID 1 from the agent's child: $r"
exit 1
SH
chmod 0755 "$root/usr/local/sbin/ssacli-init-probe"
# The textfile unit runs only where node_exporter's directory is.
install -d -m 0755 "$root/var/lib/prometheus/node-exporter"
probed="smartarray-agent.service smartarray-agent-serve.service smartarray-agent-textfile.service"
for unit in $probed; do
    mkdir -p "$root/etc/systemd/system/$unit.d"
    printf '[Service]\nExecStartPre=/usr/local/sbin/smartarray-probe\n' \
        > "$root/etc/systemd/system/$unit.d/probe.conf"
done

say "booting the container"
nspawn_boot "saci-priv-$$" "$work/console.log"
show() { in_ct systemctl show -p "$2" --value "$1"; }
journal() { in_ct journalctl -u "$1" --no-pager -o cat; }

# 1. both active, serve answers with the simulator's controller
for unit in smartarray-agent.service smartarray-agent-serve.service; do
    for _ in $(seq 120); do [ "$(show "$unit" ActiveState)" = active ] && break; sleep 0.5; done
    [ "$(show "$unit" ActiveState)" = active ] || { journal "$unit" | tail -n 30; fail "$unit is $(show "$unit" ActiveState)"; }
done
metrics=""
for _ in $(seq 60); do
    metrics=$(nspawn_fetch http://127.0.0.1:9712/metrics 2>/dev/null) && grep -q 'collector="ssacli"} 1.0' <<<"$metrics" && break
    sleep 0.5
done
grep -q '^smartarray_controller_info{.*model="Smart Array P440ar"' <<<"$metrics" \
    || { journal smartarray-agent-serve.service | tail; fail "/metrics from serve has no simulated controller"; }
# each process's own figures, read under its unit's sandbox: the daemon's in the page it
# published, serve's added by serve
grep -q '^process_start_time_seconds ' <<<"$metrics" || fail "/metrics has no process_* of the daemon"
grep -q '^smartarray_serve_process_start_time_seconds ' <<<"$metrics" \
    || fail "/metrics has no smartarray_serve_process_* of the serve unit"
say "1 ok: both units active; /metrics from serve has the simulated controller and both processes' figures"

# 2. who holds what
serve_status=$(in_ct cat "/proc/$(show smartarray-agent-serve.service MainPID)/status")
uid=$(awk '/^Uid:/ {print $2}' <<<"$serve_status")
[ "$uid" != 0 ] || fail "serve runs as root"
grep -q '^CapEff:[[:space:]]*0000000000000000$' <<<"$serve_status" || fail "serve has capabilities"
grep -q '^CapBnd:[[:space:]]*0000000000000000$' <<<"$serve_status" || fail "serve has a bounding set"
journal smartarray-agent.service | grep -c 'listening on file:///run/smartarray-agent-metrics/' >/dev/null \
    || fail "the root daemon did not publish instead of listening"
agent_pid=$(show smartarray-agent.service MainPID)
in_ct /opt/smartarray-agent/bin/python - "$agent_pid" <<'PY' || fail "the root daemon has a listening TCP socket"
import os, sys
pid = sys.argv[1]
inodes = {os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1] for fd in os.listdir(f"/proc/{pid}/fd")
          if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:[")}
for table in ("tcp", "tcp6"):
    for line in open(f"/proc/{pid}/net/{table}").read().splitlines()[1:]:
        fields = line.split()
        if fields[9] in inodes and fields[3] == "0A":
            sys.exit(1)
PY
say "2 ok: serve runs as uid $uid with no capability; the root daemon listens on nothing"

# 3. the probes (the textfile unit is a oneshot: start blocks until its run ended)
in_ct systemctl start smartarray-agent-textfile.service \
    || { journal smartarray-agent-textfile.service | tail -n 30; fail "the textfile run failed"; }
control=$(in_ct systemd-run --wait --pipe --quiet /usr/local/sbin/smartarray-probe)
for line in "systemd-run: ALLOWED" "/etc/shadow: READABLE" "/etc/ssh: READABLE" "kill PID 1: ALLOWED"; do
    grep -q "PROBE $line" <<<"$control" || fail "the unconfined probe did not get '$line': $control"
done
for unit in $probed; do
    probes=$(journal "$unit" | grep '^PROBE' || true)
    for line in "systemd-run: refused" "/etc/shadow: unreadable" "/etc/ssh: unreadable"; do
        grep -q "PROBE $line" <<<"$probes" || fail "inside $unit: expected '$line', got: $probes"
    done
    say "3 ok: inside $unit systemd-run is refused, /etc/shadow and /etc/ssh unreadable (unconfined: all three allowed)"
done

# 4. the same units, each running the agent with the stand-in as its vendor CLI
for unit in smartarray-agent.service smartarray-agent-textfile.service; do
    sandboxed=$(journal "$unit" | grep '^PROBE kill PID 1: ' || true)
    grep -q 'ALLOWED' <<<"$sandboxed" \
        || fail "inside $unit the sandbox alone refused kill -0 1: the probe cannot tell"
    start=$(in_ct systemctl show -p ExecStart --value "$unit" | sed -n 's/.*argv\[\]=\([^;]*\) ;.*/\1/p')
    printf '[Service]\nExecStart=\nExecStart=%s --cli /usr/local/sbin/ssacli-init-probe\n' "$start" \
        > "$root/etc/systemd/system/$unit.d/cli-probe.conf"
done
in_ct systemctl daemon-reload
in_ct systemctl restart smartarray-agent.service
in_ct systemctl start smartarray-agent-textfile.service || true  # the stand-in fails the run
for unit in smartarray-agent.service smartarray-agent-textfile.service; do
    probe=""
    for _ in $(seq 60); do
        probe=$(journal "$unit" | grep -o "kill PID 1 from the agent's child: [A-Za-z]*" || true)
        [ -n "$probe" ] && break
        sleep 0.5
    done
    grep -q "refused" <<<"$probe" \
        || { journal "$unit" | tail -n 20; fail "inside $unit the agent's child may signal PID 1: $probe"; }
    say "4 ok: inside $unit the agent's child may not signal PID 1 (the unit's sandbox alone may)"
done

# 5. serve's reload checks the file first, as serve's user under serve's sandbox: the packaged
# one reloads; one that does not load fails the reload, and serve runs on
config=/etc/smartarray-agent/config.toml
in_ct systemctl reload smartarray-agent-serve.service \
    || { journal smartarray-agent-serve.service | tail -n 20; fail "serve's reload of the packaged configuration failed"; }
cp "$root$config" "$work/config.toml"
echo "not toml" >> "$root$config"
! in_ct systemctl reload smartarray-agent-serve.service 2>/dev/null \
    || fail "serve's reload of a configuration that does not load succeeded"
grep -q "^$config:" <<<"$(journal smartarray-agent-serve.service)" \
    || fail "the journal of serve's unit does not say what the configuration lacks"
[ "$(show smartarray-agent-serve.service ActiveState)" = active ] || fail "serve stopped on a failed reload"
cp "$work/config.toml" "$root$config"
say "5 ok: serve's reload checks the file as its user: the packaged one reloads, a broken one fails it and serve runs on"

for unit in $probed; do
    say "security: $(in_ct systemd-analyze security "$unit" 2>/dev/null | tail -n 1)"
done
say "PASS in $(($(date +%s) - nspawn_started)) s"
