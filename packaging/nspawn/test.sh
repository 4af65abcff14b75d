#!/usr/bin/env bash
# End to end under a real systemd, for one Debian release (bookworm: 12, trixie: 13): build the
# .deb by docs/packaging.md's lines in a fresh root of the release (lib.sh), install it with
# apt-get into a second fresh root of the release, which brings its dependencies from the
# release's archive, boot that root with systemd-nspawn, and check that
#   1. smartarray-agent.service reaches "active" (so Type=notify readiness works),
#   2. /metrics answers with the simulator's controller,
#   3. systemctl reload (SIGHUP through ExecReload) keeps it running; a reload of a
#      configuration that does not load fails, says why, and the running one stays,
#   4. a SIGKILL of the main process brings a restart (Restart=on-failure),
#   5. a collection that hangs (simulator hang fault) trips the watchdog, which restarts it,
#   6. the textfile timer starts without node_exporter's directory and its service is skipped,
#      not failed; with the directory it writes smartarray.prom under its own sandbox; with no
#      vendor CLI it writes the failure into the file (collector success 0) and does not fail,
#   7. dpkg -r stops the service, a reinstall on the running system starts it with the
#      administrator's config kept, and a purge removes the config, smartarray.prom, the
#      publish directory and the smartarray-metrics group but not the audit log or /opt,
#   8. with the state directory docs/packaging.md gives to both, a cache ratio changed from the
#      CLI on the simulator shows in the service's /metrics,
# and print the live `systemd-analyze security` exposure of both services.
#
#   sudo packaging/nspawn/test.sh [RELEASE [DEB]]       (RELEASE: bookworm, the default, or trixie)
#
# Needs root, systemd-container (systemd-nspawn), debootstrap and util-linux (nsenter). The
# minimal root of each release is cached in $SMARTARRAY_CI_CACHE (default
# /var/cache/smartarray-agent-ci) and reused; each root here is a throw-away overlay (or copy) of
# it. Network: the host's, for debootstrap, apt-get and the build's pip (Debian's archive at
# $DEBIAN_MIRROR, PyPI); the booted container has a private network with loopback only.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
machine="saci-$$"
nspawn_name=nspawn
nspawn_release=${1:-bookworm}
# shellcheck source=lib.sh
. "$repo/packaging/nspawn/lib.sh"
nspawn_check_tools test.sh

work=$(mktemp -d /tmp/smartarray-nspawn.XXXXXX)
trap 'nspawn_cleanup "$work"' EXIT

# --- the package, built in a fresh root of the release (lib.sh) ----------------------------
nspawn_deb "${2:-}"

# --- a second fresh root of the release ---------------------------------------------------
nspawn_prepare "$work"

# --- install and configure (no boot yet) ------------------------------------------------
nspawn_install_deb "$deb" "$work/apt.log"
say "installed with apt-get, which took from the archive: $(sed -n 's/^Unpacking \([^ ]*\) .*/\1/p' "$work/apt.log" | paste -sd ' ')"
for unit in smartarray-agent.service smartarray-agent-serve.service; do
    [ -L "$root/etc/systemd/system/multi-user.target.wants/$unit" ] \
        || fail "the package did not enable $unit"
done
grep -q '^publish_dir = "/run/smartarray-agent-metrics"' "$root/etc/smartarray-agent/config.toml" \
    || fail "the packaged config.toml does not publish for the serve unit"
# This test drives the daemon answering HTTP itself (privileges.sh drives the packaged
# publish-and-serve layout): its config below has no publish_dir, so the serve unit goes, as
# the packaged config.toml tells an operator to do (and stays off across a reinstall).
systemctl --root="$root" --quiet disable smartarray-agent-serve.service
[ ! -e "$root/etc/systemd/system/multi-user.target.wants/smartarray-agent-serve.service" ] \
    || fail "smartarray-agent-serve.service still enabled after disable"

# The simulator in place of ssacli: a scenario file the test can change (each collection
# starts the CLI, which reads it), a CLI timeout far above the watchdog's so that a hang is
# the watchdog's to catch.
nspawn_install_scenario gen9-battery
cat > "$root/etc/smartarray-agent/config.toml" <<'TOML'
[ssacli]
simulate = "/etc/smartarray-agent/sim.toml"
timeout_s = 600.0

[collect]
interval_s = 2.0

[web]
listen_address = "127.0.0.1:9712"

[audit]
file = "/var/lib/smartarray-agent/audit.jsonl"
TOML
mkdir -p "$root/etc/systemd/system/smartarray-agent.service.d"
cat > "$root/etc/systemd/system/smartarray-agent.service.d/test.conf" <<'INI'
[Service]
WatchdogSec=10s
RestartSec=1s
TimeoutStartSec=60s
INI

# --- boot ---------------------------------------------------------------------------------
say "booting the container"
nspawn_boot "$machine" "$work/console.log"

show() { in_ct systemctl show -p "$1" --value smartarray-agent.service; }
wait_active() {  # wait_active SECONDS
    for _ in $(seq $(($1 * 2))); do
        [ "$(show ActiveState)" = active ] && return 0
        sleep 0.5
    done
    return 1
}
journal() { in_ct journalctl -u smartarray-agent.service --no-pager -o cat; }
# grep reads everything (no -q): an early exit would fail the pipe with SIGPIPE under pipefail.
journal_has() { journal | grep -c -- "$1" >/dev/null; }

# 1. notify readiness
wait_active 60 || { journal | tail -n 40; fail "smartarray-agent.service did not become active: $(show ActiveState)/$(show SubState)"; }
[ "$(show Type)" = notify ] || fail "Type is $(show Type)"
[ -n "$(show StatusText)" ] || fail "no STATUS= from the daemon"
say "1 ok: active (Type=notify), status: $(show StatusText)"
# The sandbox is in force on the running process, not only written in the unit.
proc_status=$(in_ct cat "/proc/$(show MainPID)/status")
grep -q '^CapBnd:[[:space:]]*0000000000020000$' <<<"$proc_status" \
    || fail "capability bounding set is not CAP_SYS_RAWIO alone: $(grep CapBnd <<<"$proc_status")"
grep -q '^NoNewPrivs:[[:space:]]*1$' <<<"$proc_status" || fail "NoNewPrivs is off"
grep -q '^Seccomp:[[:space:]]*2$' <<<"$proc_status" || fail "no seccomp filter"
in_ct nsenter -t "$(show MainPID)" -m /bin/sh -c 'touch /etc/smartarray-agent/probe' 2>/dev/null \
    && fail "the service can write /etc (ProtectSystem=strict not in force)"
in_ct nsenter -t "$(show MainPID)" -m /bin/sh -c 'touch /var/lib/smartarray-agent/probe && rm /var/lib/smartarray-agent/probe' \
    || fail "the service cannot write its state directory"
say "1 ok: CapBnd=CAP_SYS_RAWIO, NoNewPrivs, seccomp, read-only /etc, writable state directory"

# 2. /metrics with the simulator's controller
metrics=$(nspawn_fetch http://127.0.0.1:9712/metrics) || fail "/metrics did not answer"
grep -q '^smartarray_controller_info{.*model="Smart Array P440ar"' <<<"$metrics" \
    || fail "/metrics has no simulated controller"
grep -q '^smartarray_collector_success{collector="ssacli"} 1.0' <<<"$metrics" \
    || fail "the ssacli collector did not succeed under the sandbox"
grep -q '^smartarray_backup_power_status{controller="0",state="ok"} 1.0' <<<"$metrics" \
    || fail "backup power is not reported OK"
# the daemon's own process figures, read under its unit's sandbox
grep -q '^process_start_time_seconds ' <<<"$metrics" \
    || fail "/metrics has no process_* of the daemon"
say "2 ok: /metrics answers ($(grep -c '^smartarray_' <<<"$metrics") series, the daemon's process_* among them)"

# 3. reload
pid_before=$(show MainPID)
in_ct systemctl reload smartarray-agent.service || fail "systemctl reload"
sleep 1
if [ "$(show ActiveState)" != active ] || [ "$(show MainPID)" != "$pid_before" ]; then
    fail "reload changed the service: $(show ActiveState), pid $(show MainPID)"
fi
say "3 ok: reload (SIGHUP) kept pid $pid_before active"
# A configuration that does not load: the reload fails at once and says why; the daemon keeps
# running on the configuration it has (the next scrape still has the controller).
cp "$root/etc/smartarray-agent/config.toml" "$work/config.toml"
sed -i 's/^interval_s = 2.0$/interval_s = -1/' "$root/etc/smartarray-agent/config.toml"
in_ct systemctl reload smartarray-agent.service > "$work/reload.log" 2>&1 \
    && fail "systemctl reload of a configuration that does not load exited 0"
status=$(in_ct systemctl status --no-pager -n 20 smartarray-agent.service || true)
grep -q 'config.toml:[0-9]*: collect.interval_s' <<<"$status" \
    || { echo "$status"; fail "systemctl status does not say what is wrong"; }
[ "$(show ActiveState)" = active ] && [ "$(show MainPID)" = "$pid_before" ] \
    || fail "a failed reload changed the service: $(show ActiveState), pid $(show MainPID)"
nspawn_metrics_match '^smartarray_controller_info{' || fail "no /metrics after a failed reload"
cp "$work/config.toml" "$root/etc/smartarray-agent/config.toml"
in_ct systemctl reload smartarray-agent.service || fail "systemctl reload of the config put back"
say "3 ok: a reload of a configuration that does not load fails ($(head -n 1 "$work/reload.log")), systemctl status says why, pid $pid_before runs on"

# 4. SIGKILL -> Restart=on-failure
restarts=$(show NRestarts)
in_ct /bin/sh -c "kill -KILL $pid_before"
for _ in $(seq 60); do
    pid_now=$(show MainPID)
    [ "$(show NRestarts)" -gt "$restarts" ] && [ "$pid_now" != 0 ] && [ "$pid_now" != "$pid_before" ] \
        && [ "$(show ActiveState)" = active ] && break
    sleep 0.5
done
[ "$(show NRestarts)" -gt "$restarts" ] || fail "no restart after SIGKILL"
wait_active 30 || fail "not active again after SIGKILL"
nspawn_fetch http://127.0.0.1:9712/-/healthy >/dev/null || fail "/-/healthy after the restart"
say "4 ok: SIGKILL of pid $pid_before -> restarted as pid $(show MainPID)"

# 5. a hung collection -> watchdog
restarts=$(show NRestarts)
pid_before=$(show MainPID)
cat >> "$root/etc/smartarray-agent/sim.toml" <<'TOML'

[faults]
hang = ["ctrl all show config detail"]
TOML
hung_at=$(date +%s)
for _ in $(seq 90); do
    journal_has 'Watchdog timeout' && break
    sleep 0.5
done
journal_has 'Watchdog timeout' || { journal | tail -n 30; fail "no watchdog timeout"; }
say "5 watchdog fired $(($(date +%s) - hung_at)) s after the hang began"
journal_has 'Thread 0x' && say "   the journal holds the stack of every thread (faulthandler on SIGABRT)"
for _ in $(seq 30); do
    [ "$(show NRestarts)" -gt "$restarts" ] && break
    sleep 0.5
done
[ "$(show NRestarts)" -gt "$restarts" ] || fail "no restart after the watchdog"
# Heal the simulator: the restarted agent comes up again.
cp "$scenario" "$root/etc/smartarray-agent/sim.toml"
in_ct systemctl restart smartarray-agent.service || true
wait_active 60 || { journal | tail -n 30; fail "not active after the hang was removed"; }
say "5 ok: the watchdog killed pid $pid_before and the service was restarted"

# 6. the textfile timer and service
textfile_show() { in_ct systemctl show -p "$1" --value smartarray-agent-textfile.service; }
prom="$root/var/lib/prometheus/node-exporter/smartarray.prom"
in_ct systemctl start smartarray-agent-textfile.timer || fail "the textfile timer did not start"
in_ct systemctl start smartarray-agent-textfile.service || fail "the textfile service failed without node_exporter"
[ "$(textfile_show ConditionResult)" = no ] || fail "the textfile service ran without node_exporter's directory"
in_ct systemctl is-failed --quiet smartarray-agent-textfile.service smartarray-agent-textfile.timer \
    && fail "a textfile unit is failed without node_exporter's directory"
[ "$(in_ct systemctl show -p ActiveState --value smartarray-agent-textfile.timer)" = active ] \
    || fail "the textfile timer is not active"
say "6 ok: without node_exporter the timer is active and the service skipped (condition), not failed"
mkdir -p "$(dirname "$prom")"
in_ct systemctl start smartarray-agent-textfile.service \
    || { in_ct journalctl -u smartarray-agent-textfile.service --no-pager -o cat | tail; fail "textfile service"; }
grep -q '^smartarray_collector_success{collector="ssacli"} 1.0' "$prom" || fail "no smartarray.prom written"
say "6 ok: smartarray-agent-textfile.service wrote smartarray.prom"
# No vendor CLI: the container has none, so a config without the simulator finds nothing.
printf '[sysfs]\nenabled = false\n' > "$root/etc/smartarray-agent/nocli.toml"
mkdir -p "$root/etc/systemd/system/smartarray-agent-textfile.service.d"
cat > "$root/etc/systemd/system/smartarray-agent-textfile.service.d/nocli.conf" <<'INI'
[Service]
ExecStart=
ExecStart=/opt/smartarray-agent/bin/smartarray-agent metrics --config /etc/smartarray-agent/nocli.toml --textfile ${TEXTFILE_DIR}
INI
in_ct systemctl daemon-reload
in_ct systemctl start smartarray-agent-textfile.service || fail "the textfile service failed with no vendor CLI"
[ "$(textfile_show Result)" = success ] || fail "textfile service result: $(textfile_show Result)"
grep -q '^smartarray_collector_success{collector="ssacli"} 0.0' "$prom" \
    || fail "smartarray.prom does not say the ssacli collector failed"
rm -r "$root/etc/systemd/system/smartarray-agent-textfile.service.d" "$root/etc/smartarray-agent/nocli.toml"
in_ct systemctl daemon-reload
say "6 ok: with no vendor CLI the file says collector success 0 and the unit is not failed"

for unit in smartarray-agent.service smartarray-agent-textfile.service; do
    exposure=$(in_ct systemd-analyze security "$unit" 2>/dev/null | tail -n 1)
    say "security: $exposure"
done

# 8. one simulated host for the service and the operator's CLI (docs/packaging.md)
cat > "$root/etc/systemd/system/smartarray-agent.service.d/simstate.conf" <<'INI'
[Service]
Environment=SMARTARRAY_SIM_STATE_DIR=/run/smartarray-agent/sim
INI
in_ct systemctl daemon-reload
in_ct systemctl restart smartarray-agent.service || fail "restart with the shared simulator state"
wait_active 60 || fail "not active with the shared simulator state"
in_ct env SMARTARRAY_SIM_STATE_DIR=/run/smartarray-agent/sim /usr/bin/smartarray-agent \
    set-cache-ratio 25/75 --slot 0 --simulate /etc/smartarray-agent/sim.toml > "$work/ratio.log" 2>&1 \
    || { cat "$work/ratio.log"; fail "set-cache-ratio on the shared simulator"; }
for _ in $(seq 60); do
    nspawn_metrics_match '^smartarray_cache_ratio{controller="0",op="write"} 0.75' && break
    sleep 0.5
done
nspawn_metrics_match '^smartarray_cache_ratio{controller="0",op="write"} 0.75' \
    || fail "the CLI's change to the shared simulator does not show in /metrics"
say "8 ok: a cache ratio set from the CLI shows in the service's /metrics (shared simulator state)"

# 7. the maintainer scripts on a running system: remove stops it, a reinstall starts it again
# with the administrator's config kept, purge removes the config and keeps the audit log.
in_ct dpkg -r smartarray-agent > "$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log"; fail "dpkg -r"; }
[ "$(show ActiveState)" = inactive ] || fail "still $(show ActiveState) after dpkg -r"
[ ! -e "$root/usr/lib/systemd/system/smartarray-agent.service" ] || fail "unit left after dpkg -r"
[ ! -e "$prom" ] || fail "smartarray.prom left after dpkg -r"
in_ct dpkg -i "/var/tmp/${deb##*/}" > "$work/dpkg-i.log" 2>&1 \
    || { cat "$work/dpkg-i.log"; fail "dpkg -i on the running system"; }
wait_active 60 || {
    cat "$work/dpkg-i.log"; in_ct systemctl status --no-pager smartarray-agent.service
    fail "a reinstall did not start the service: $(show ActiveState)"
}
grep -q '^simulate = "/etc/smartarray-agent/sim.toml"' "$root/etc/smartarray-agent/config.toml" \
    || fail "the reinstall replaced the administrator's config"
in_ct systemctl start smartarray-agent-textfile.service || fail "textfile service after the reinstall"
[ -e "$prom" ] || fail "no smartarray.prom after the reinstall"
in_ct dpkg --purge smartarray-agent > "$work/dpkg-p.log" 2>&1 || { cat "$work/dpkg-p.log"; fail "purge"; }
[ ! -e "$root/etc/smartarray-agent/config.toml" ] || fail "config left after purge"
dangling=$(find "$root/etc/systemd" -name 'smartarray-agent*' -xtype l)
[ -z "$dangling" ] || fail "purge left dangling unit links: $dangling"
[ -d "$root/var/lib/smartarray-agent" ] || fail "purge removed the state directory (audit log)"
[ ! -e "$prom" ] || fail "smartarray.prom left after purge"
[ -d "$root/opt" ] || fail "purge removed /opt"
! in_ct test -e /run/smartarray-agent-metrics || fail "purge left /run/smartarray-agent-metrics"
! in_ct getent group smartarray-metrics >/dev/null || fail "purge left the smartarray-metrics group"
say "7 ok: dpkg -r stops it and removes smartarray.prom, dpkg -i starts it with the config kept, purge removes the config, smartarray.prom, the publish directory and the group, and keeps the audit log and /opt"

say "PASS in $(($(date +%s) - nspawn_started)) s"
