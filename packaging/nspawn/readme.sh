#!/usr/bin/env bash
# The README's commands, copied from README.md, run as a script runs them (no terminal,
# standard input /dev/null, nothing answered for them) in a fresh booted root of a Debian
# release made with debootstrap (lib.sh), as root or as a user with sudo, from a copy of this
# checkout in the user's home:
#
#   sudo packaging/nspawn/readme.sh RELEASE USER server
#     1. the first command (a virtual environment, `run --simulate gen9-battery`) until
#        `curl 127.0.0.1:9712/metrics` shows the simulated controller, then stopped;
#     2. the "On a real server" lines, without HPE's ssacli: they build and install the
#        package, and `status` says what the README says it says; then the README's lines
#        that run the service on the simulator end with exit 0, the last (the check of
#        /metrics) once the service has collected; they installed no compiler (dpkg-dev's
#        recommendations) and no cron or mail server (logrotate's recommendations);
#     3. a purge leaves /opt and takes the publish directory and the smartarray-metrics group.
#   sudo packaging/nspawn/readme.sh RELEASE USER all
#     the same, with the README's second command after the first: the test suite, on the
#     release's Python (3.13 on trixie), with the field captures of ../shared beside the copy.
#
# RELEASE: bookworm or trixie; USER: root, or smartops (made here, with sudo). Needs root,
# systemd-container (systemd-nspawn), debootstrap and util-linux (nsenter). Unlike test.sh, the
# container shares the host's network: the commands fetch Debian packages and PyPI's, as on a
# real server.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
machine="sareadme-$$"
nspawn_name=readme
nspawn_release=${1:?usage: readme.sh RELEASE USER server|all}
user=${2:?usage: readme.sh RELEASE USER server|all}
part=${3:?usage: readme.sh RELEASE USER server|all}
# shellcheck source=lib.sh
. "$repo/packaging/nspawn/lib.sh"
nspawn_check_tools readme.sh

# The README's agent listens on 127.0.0.1:9712 of the host's network, which the container
# shares: one run of this script at a time.
exec 8>/tmp/smartarray-nspawn-readme.lock
flock 8
work=$(mktemp -d /tmp/smartarray-readme.XXXXXX)
trap 'nspawn_cleanup "$work"' EXIT

# The README's first two commands, and the block under "## On a real server", as a reader
# copies them.
doc_block README.md "# smartarray-agent" 1 > "$work/first.sh"
doc_block README.md "# smartarray-agent" 2 > "$work/second.sh"
doc_block README.md "## On a real server" 1 > "$work/real-server.sh"
# ... and the next block of that section: the service on the simulator, and the check again.
doc_block README.md "## On a real server" 2 > "$work/simulator.sh"
for lines in first second real-server simulator; do
    [ -s "$work/$lines.sh" ] || fail "README.md has no $lines command"
done
check_line=$(tail -n 1 "$work/simulator.sh")

nspawn_prepare "$work"
# What the lines must not bring: a compiler, cron, a mail server.
unwanted='^(gcc|g\+\+|gcc-[0-9]+|cpp|build-essential|exim4.*|bsd-mailx|postfix|cron)$'
installed() { chroot "$root" dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | awk '/^ii/ { print $2 }' | sort; }
before=$(installed)
home=/root
if [ "$user" != root ]; then
    # A user with sudo, which a minimal root lacks: no password asked, as from a script.
    home=/home/$user
    nspawn_run "$root" sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends sudo" \
        > "$work/sudo.log" 2>&1 || { cat "$work/sudo.log"; fail "apt-get install sudo"; }
    chroot "$root" useradd -m -s /bin/bash "$user"
    echo "$user ALL=(ALL) NOPASSWD: ALL" > "$root/etc/sudoers.d/$user"
    chmod 0440 "$root/etc/sudoers.d/$user"
fi
# The checkout, and the field captures the tests read from ../shared/captures beside it.
mkdir -p "$root$home/smartarray-agent"
tar -C "$repo" --exclude=./.git --exclude=./dist --exclude='*/__pycache__' -cf - . \
    | tar -C "$root$home/smartarray-agent" -xf -
if [ -d "$repo/../shared/captures" ]; then
    mkdir -p "$root$home/shared"
    cp -a "$repo/../shared/captures" "$root$home/shared/"
fi
cp "$work"/*.sh "$root$home/"
chroot "$root" chown -R "$user:" "$home"
nspawn_boot "$machine" "$work/console.log" host-network

pip_cert=$(nspawn_pip_cert "$root")
as() {  # as COMMAND...: in the container, as a login of USER would run it, no terminal
    in_ct runuser -u "$user" -- env -i HOME="$home" LANG=C.UTF-8 $pip_cert \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@" < /dev/null
}

# 1. The first command runs the agent in the foreground: in the background here, until curl
# (which it installs) finds the simulated controller, then stopped.
say "$user: the README's first command: $(cat "$work/first.sh")"
as bash -c "cd ~/smartarray-agent && exec bash ~/first.sh" > "$work/first.log" 2>&1 &
first=$!
deadline=$(($(date +%s) + 600))
until as sh -c 'curl -s 127.0.0.1:9712/metrics | grep "^smartarray_controller_info{"' > "$work/first-metric.log" 2>&1; do
    kill -0 "$first" 2>/dev/null || { tail -n 30 "$work/first.log"; fail "$user: the first command ended"; }
    [ "$(date +%s)" -lt "$deadline" ] || { tail -n 30 "$work/first.log"; fail "$user: no metric from the first command"; }
    sleep 2
done
say "1 ok ($user): the first command serves $(cut -c1-100 "$work/first-metric.log") after $(($(date +%s) - nspawn_started)) s"
# Stopped as Ctrl-C would: every process the command started, by id (a minimal root has no
# pkill), the deepest first.
descendants() { local child; for child in $(ps -o pid= --ppid "$1"); do descendants "$child"; echo "$child"; done; }
kill -INT $(descendants "$first") 2>/dev/null || true
wait "$first" || true

case $part in
    server) ;;
    all)
        say "$user: the README's second command: $(cat "$work/second.sh")"
        started=$(date +%s)
        as bash -c "cd ~/smartarray-agent && exec bash ~/second.sh" > "$work/second.log" 2>&1 \
            || { tail -n 60 "$work/second.log"; fail "$user: the tests failed"; }
        say "1 ok ($user): the tests on $(as "$home/.venvs/smartarray-agent-test/bin/python" -V): $(tail -n 1 "$work/second.log") ($(($(date +%s) - started)) s with the install)" ;;
    *) fail "usage: readme.sh RELEASE USER server|all" ;;
esac

# 2. "On a real server", then the simulator's lines, each block but its check, in one shell as
# a reader's (the simulator's use the first block's $s; not under -e: the first line's
# s=$(command -v sudo) is false where there is no sudo, and `status` exits 3 without ssacli);
# then the check until the first collection on the simulator is served.
say "$user: the lines under 'On a real server' (building the .deb on the way), then the simulator's"
as bash -c "cd ~/smartarray-agent && bash <(head -n -1 ~/real-server.sh; head -n -1 ~/simulator.sh)" \
    > "$work/lines.log" 2>&1 || { tail -n 40 "$work/lines.log"; fail "$user: the lines failed"; }
grep -q '^smartarray-agent: no Smart Array CLI found: looked for ssacli on PATH, ' "$work/lines.log" \
    || { tail -n 40 "$work/lines.log"; fail "$user: status did not say what the README says without ssacli"; }
deadline=$(($(date +%s) + 120))
until as bash -e -c "$check_line" >> "$work/lines.log" 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || { tail -n 40 "$work/lines.log"; fail "$user: the check line never found the metric"; }
    sleep 2
done
say "2 ok ($user): the lines ran, and '$check_line' finds the metric"
grep -E '^(smartarray-agent: no Smart Array|smartarray_backup_power_status)' "$work/lines.log" | cut -c1-120 | sed 's/^/    /'
added=$(comm -13 <(echo "$before") <(installed) | grep -E "$unwanted" || true)
[ -z "$added" ] || fail "$user: the lines installed $added"
say "2 ok ($user): no compiler, no cron, no mail server"

# 3. purge
in_ct apt-get purge -y smartarray-agent > "$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "$user: apt-get purge"; }
[ -d "$root/opt" ] || fail "$user: the purge removed /opt"
! in_ct test -e /run/smartarray-agent-metrics || fail "$user: the purge left /run/smartarray-agent-metrics"
! in_ct getent group smartarray-metrics > /dev/null || fail "$user: the purge left the smartarray-metrics group"
say "3 ok ($user): the purge keeps /opt, takes the publish directory and the group"

say "PASS in $(($(date +%s) - nspawn_started)) s"
