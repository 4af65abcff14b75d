#!/usr/bin/env bash
# The README's "On a real server" lines, copied from README.md, run as a script runs them (no
# terminal, standard input /dev/null, nothing answered for them) in a booted Debian 12 root
# made with debootstrap (lib.sh), first as root, then as a user with sudo, each from a copy of
# this checkout. Each pass checks that
#   1. the lines end with exit 0, the last (the check of /metrics) once the service has
#      collected, with a stand-in for HPE's ssacli (the bundled simulator) in /usr/sbin,
#   2. they installed no compiler (dpkg-dev's recommendations) and no cron or mail server
#      (logrotate's),
#   3. a purge leaves /opt and takes the publish directory and the smartarray-metrics group.
#
#   sudo packaging/nspawn/readme.sh
#
# Needs root, systemd-container (systemd-nspawn), debootstrap and util-linux (nsenter). Unlike
# test.sh, the container shares the host's network: the lines fetch Debian packages and the
# build fetches the Python dependencies from PyPI, as on a real server.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
machine="sareadme-$$"
nspawn_name=readme
# shellcheck source=lib.sh
. "$repo/packaging/nspawn/lib.sh"
nspawn_check_tools readme.sh

work=$(mktemp -d /tmp/smartarray-readme.XXXXXX)
trap 'nspawn_cleanup "$work"' EXIT

# The block under "## On a real server", as a reader copies it.
awk '/^## On a real server/ { section = 1 } section && /^```sh/ { block = 1; next }
     block && /^```/ { exit } block' "$repo/README.md" > "$work/real-server.sh"
[ -s "$work/real-server.sh" ] || fail "no sh block under '## On a real server' in README.md"
check_line=$(tail -n 1 "$work/real-server.sh")
say "the README's lines:"; sed 's/^/    /' "$work/real-server.sh"

nspawn_prepare "$work"
# What the lines must not bring: a compiler, cron, a mail server (with the debootstrap base's
# own packages taken out: the base includes logrotate for test.sh, which may bring cron).
unwanted='^(gcc|g\+\+|gcc-12|cpp|build-essential|exim4.*|bsd-mailx|postfix|cron)$'
before=$(chroot "$root" dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | awk '/^ii/ { print $2 }')
# A stand-in for HPE's ssacli: the simulator the package bundles, found where ssacli installs.
cat > "$root/usr/sbin/ssacli" <<'SH'
#!/bin/sh
exec /opt/smartarray-agent/bin/smartarray-sim --scenario gen9-battery "$@"
SH
chmod 0755 "$root/usr/sbin/ssacli"
nspawn_boot "$machine" "$work/console.log" host-network

# Where the host reaches PyPI through a proxy with a CA of its own, PIP_CERT (as pip reads it)
# names that CA; it is copied in for the build's pip. A real server needs none.
pip_cert=()
if [ -n "${PIP_CERT:-}" ]; then
    cp "$PIP_CERT" "$root/etc/smartarray-ci-pip.pem"
    pip_cert=(PIP_CERT=/etc/smartarray-ci-pip.pem)
fi

as() {  # as USER COMMAND...: in the container, as a login of USER would run it, no terminal
    local home=/root
    [ "$1" = root ] || home=/home/$1
    in_ct runuser -u "$1" -- env -i HOME="$home" LANG=C.UTF-8 "${pip_cert[@]}" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${@:2}" < /dev/null
}

run_the_lines() {  # run_the_lines USER HOME: the lines in a copy of the checkout in HOME
    local user=$1 home=$2 log="$work/lines-$1.log"
    mkdir -p "$root$home/smartarray-agent"
    tar -C "$repo" --exclude=./.git --exclude=./dist --exclude='*/__pycache__' -cf - . \
        | tar -C "$root$home/smartarray-agent" -xf -
    cp "$work/real-server.sh" "$root$home/real-server.sh"
    in_ct chown -R "$user:" "$home/smartarray-agent" "$home/real-server.sh"
    say "$user: running the lines (building the .deb on the way)"
    # All but the check, in one shell as a reader's (not under -e: the first line's
    # s=$(command -v sudo) is false where there is no sudo; the last line's status is the
    # script's, and it fails when the package is not installed); the check then until the
    # first collection is served.
    as "$user" bash -c "cd ~/smartarray-agent && bash <(head -n -1 ~/real-server.sh)" \
        > "$log" 2>&1 || { tail -n 40 "$log"; fail "$user: the lines failed"; }
    local deadline=$(($(date +%s) + 120))
    until as "$user" bash -e -c "$check_line" >> "$log" 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || { tail -n 40 "$log"; fail "$user: the check line never found the metric"; }
        sleep 2
    done
    say "1 ok ($user): the lines ran, and '$check_line' finds the metric"
    grep -E '^(Smart Array|  (cache|backup power) |smartarray_backup_power_status)' "$log" \
        | sed 's/^/    /'
    local added
    added=$(comm -13 <(sort <<<"$before") <(as root dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | awk '/^ii/ { print $2 }' | sort) | grep -E "$unwanted" || true)
    [ -z "$added" ] || fail "$user: the lines installed $added"
    say "2 ok ($user): no compiler, no cron, no mail server"
    as root apt-get purge -y smartarray-agent > "$work/purge-$user.log" 2>&1 \
        || { cat "$work/purge-$user.log"; fail "$user: apt-get purge"; }
    as root test -d /opt || fail "$user: the purge removed /opt"
    ! as root test -e /run/smartarray-agent-metrics || fail "$user: the purge left /run/smartarray-agent-metrics"
    ! as root getent group smartarray-metrics > /dev/null || fail "$user: the purge left the smartarray-metrics group"
    say "3 ok ($user): the purge keeps /opt, takes the publish directory and the group"
}

run_the_lines root /root
# A user with sudo, which a minimal root lacks: no password asked, as from a script.
as root apt-get install -y --no-install-recommends sudo > "$work/sudo.log" 2>&1 \
    || { cat "$work/sudo.log"; fail "apt-get install sudo"; }
as root useradd -m -s /bin/bash smartops
echo 'smartops ALL=(ALL) NOPASSWD: ALL' > "$root/etc/sudoers.d/smartops"
chmod 0440 "$root/etc/sudoers.d/smartops"
run_the_lines smartops /home/smartops

say "PASS in $(($(date +%s) - nspawn_started)) s"
