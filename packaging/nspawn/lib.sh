# Shared by the nspawn scripts (source it; privileges.sh does, test.sh can): a throw-away
# Debian 12 root over a cached base, booted with systemd-nspawn. Needs root, systemd-nspawn,
# debootstrap and nsenter. After nspawn_prepare WORK: $root. After nspawn_boot MACHINE:
# $leader, in_ct CMD... runs CMD in the container. nspawn_cleanup undoes both (trap it).
# The sourcing script sets $repo (the checkout) and $nspawn_name (its log prefix) first.

nspawn_started=$(date +%s)
say() { printf '[%s %3ss] %s\n' "$nspawn_name" "$(($(date +%s) - nspawn_started))" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

nspawn_cache=${SMARTARRAY_CI_CACHE:-/var/cache/smartarray-agent-ci}
nspawn_mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The package's dependencies the minbase lacks are included, since the container has no network
# to fetch them: python3.11 and logrotate.
nspawn_include=systemd,systemd-sysv,dbus,python3.11,logrotate
nspawn_recipe="bookworm minbase $nspawn_include"
nspawn_pid="" leader="" mounted="" root=""

nspawn_check_tools() {  # nspawn_check_tools NAME
    [ "$(id -u)" = 0 ] || { echo "$1: run as root" >&2; exit 2; }
    for tool in systemd-nspawn debootstrap nsenter; do
        command -v "$tool" >/dev/null || { echo "$1: $tool is missing" >&2; exit 2; }
    done
}

nspawn_deb() {  # nspawn_deb [DEB] WORK: prints DEB, or a .deb built from this checkout
    local deb=$1
    if [ -z "$deb" ]; then
        say "building the .deb" >&2
        deb=$("$repo/packaging/build-deb.sh" "$2/dist" | tail -n 1)
    fi
    [ -f "$deb" ] || fail "no package at $deb"
    echo "$deb"
}

nspawn_prepare() {  # nspawn_prepare WORK: the cached base (made once), overlaid at WORK/root
    local base="$nspawn_cache/bookworm-base"
    mkdir -p "$nspawn_cache"
    exec 9>"$nspawn_cache/.lock"
    flock 9  # one debootstrap at a time; later runs wait, then reuse its root
    if [ "$(cat "$base/.smartarray-ci-complete" 2>/dev/null)" != "$nspawn_recipe" ]; then
        say "debootstrap bookworm into $base (once; reused after)"
        rm -rf "$base"
        debootstrap --variant=minbase --include="$nspawn_include" \
            bookworm "$base" "$nspawn_mirror" > "$nspawn_cache/debootstrap.log" 2>&1 \
            || { tail -n 20 "$nspawn_cache/debootstrap.log"; fail "debootstrap"; }
        echo "smartarray-ci" > "$base/etc/hostname"
        echo "$nspawn_recipe" > "$base/.smartarray-ci-complete"
    fi
    flock -u 9
    # One container at a time on a host: with --keep-unit every container runs in the
    # caller's unit, and two booted side by side (pytest-xdist) share it.
    exec 8>/tmp/smartarray-nspawn.lock
    flock 8  # held until this script exits
    root="$1/root"
    mkdir -p "$root" "$1/upper" "$1/ovlwork"
    if mount -t overlay overlay -o "lowerdir=$base,upperdir=$1/upper,workdir=$1/ovlwork" \
        "$root" 2>/dev/null; then
        mounted=yes
    else
        say "no overlayfs here: copying the root"
        cp -a "$base/." "$root/"
    fi
}

nspawn_install_deb() {  # nspawn_install_deb DEB LOG: dpkg -i in the root, not booted
    cp "$1" "$root/var/tmp/smartarray-agent.deb"
    systemd-nspawn -q -D "$root" --register=no --keep-unit --private-network --pipe \
        dpkg -i /var/tmp/smartarray-agent.deb > "$2" 2>&1 || { cat "$2"; fail "dpkg -i"; }
}

in_ct() { nsenter -t "$leader" -a "$@"; }

nspawn_boot() {  # nspawn_boot MACHINE CONSOLE_LOG [host-network]: boot, wait until running
    # or degraded. CAP_SYS_RAWIO is not in nspawn's default set; give it so the units' bounding
    # set can be checked as on a host. The network is loopback alone unless asked for.
    local network=--private-network
    [ "${3:-}" = host-network ] && network=--resolv-conf=copy-host
    systemd-nspawn -q -D "$root" -M "$1" --boot --register=no --keep-unit "$network" \
        --capability=CAP_SYS_RAWIO --console=pipe < /dev/null > "$2" 2>&1 &
    nspawn_pid=$!
    for _ in $(seq 100); do
        leader=$(pgrep -P "$nspawn_pid" -x systemd || true)
        [ -n "$leader" ] && break
        sleep 0.1
    done
    [ -n "$leader" ] || { cat "$2"; fail "the container's systemd did not start"; }
    local state=""
    for _ in $(seq 120); do
        state=$(in_ct systemctl is-system-running 2>/dev/null || true)
        case "$state" in running|degraded) break ;; esac
        sleep 0.5
    done
    say "container up: $state"
}

nspawn_fetch() {  # nspawn_fetch URL: the body, fetched from inside the container
    in_ct python3.11 -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"
}

nspawn_install_scenario() {  # nspawn_install_scenario NAME: the package's own NAME scenario
    # as /etc/smartarray-agent/sim.toml in the root; its path in the package in $scenario
    scenario=$(find "$root/opt/smartarray-agent/lib" -path "*simulator/scenarios/$1.toml" -print -quit)
    [ -n "$scenario" ] || fail "the bundled $1 scenario is not in the package"
    cp "$scenario" "$root/etc/smartarray-agent/sim.toml"
}

nspawn_metrics_match() {  # nspawn_metrics_match REGEX: the container's /metrics has a matching line
    # The whole body first: `fetch | grep -q` fails under pipefail when grep stops early.
    local body
    body=$(nspawn_fetch http://127.0.0.1:9712/metrics 2>/dev/null) || return 1
    grep -q -- "$1" <<<"$body"
}

nspawn_cleanup() {  # nspawn_cleanup WORK
    set +e
    if [ -n "$leader" ] && kill -0 "$leader" 2>/dev/null; then
        in_ct systemctl poweroff >/dev/null 2>&1
        for _ in $(seq 30); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.5; done
    fi
    [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null && kill "$nspawn_pid"
    [ -n "$nspawn_pid" ] && wait "$nspawn_pid" 2>/dev/null
    [ -n "$mounted" ] && umount "$root"
    rm -rf "$1"
}
