# Shared by the nspawn scripts (source it): throw-away roots of a Debian release over a cached
# minimal base, booted with systemd-nspawn, and the .deb built for that release inside one of
# them. Needs root, systemd-nspawn, debootstrap and nsenter. The sourcing script sets $repo (the
# checkout), $nspawn_name (its log prefix) and $nspawn_release (bookworm or trixie) first.
# After nspawn_prepare WORK: $root. After nspawn_boot MACHINE: $leader, in_ct CMD... runs CMD in
# the container. nspawn_cleanup WORK undoes both (trap it).

nspawn_started=$(date +%s)
say() { printf '[%s %s %3ss] %s\n' "$nspawn_name" "$nspawn_release" "$(($(date +%s) - nspawn_started))" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

case $nspawn_release in
    bookworm | trixie) ;;
    *) echo "${0##*/}: no such release: '$nspawn_release' (bookworm or trixie)" >&2; exit 2 ;;
esac
nspawn_cache=${SMARTARRAY_CI_CACHE:-/var/cache/smartarray-agent-ci}
nspawn_mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# A minimal system that boots; the package's dependencies (the release's python3.X among
# them) come from the release's archive when apt-get installs the package, as on a server.
nspawn_include=systemd,systemd-sysv,dbus
nspawn_recipe="$nspawn_release minbase $nspawn_include"
nspawn_pid="" leader="" root="" nspawn_mounts=()

nspawn_check_tools() {  # nspawn_check_tools NAME
    [ "$(id -u)" = 0 ] || { echo "$1: run as root" >&2; exit 2; }
    for tool in systemd-nspawn debootstrap nsenter; do
        command -v "$tool" >/dev/null || { echo "$1: $tool is missing" >&2; exit 2; }
    done
}

nspawn_overlay() {  # nspawn_overlay DIR: a fresh root of the release at DIR/root (the cached
    # base, made once, under an overlay or copied)
    local base="$nspawn_cache/$nspawn_release-base"
    mkdir -p "$nspawn_cache"
    exec 9>"$nspawn_cache/.lock"
    flock 9  # one debootstrap at a time; later runs wait, then reuse its root
    if [ "$(cat "$base/.smartarray-ci-complete" 2>/dev/null)" != "$nspawn_recipe" ]; then
        say "debootstrap $nspawn_release into $base (once; reused after)"
        rm -rf "$base"
        debootstrap --variant=minbase --include="$nspawn_include" \
            "$nspawn_release" "$base" "$nspawn_mirror" > "$nspawn_cache/debootstrap.log" 2>&1 \
            || { tail -n 20 "$nspawn_cache/debootstrap.log"; fail "debootstrap"; }
        echo "smartarray-ci" > "$base/etc/hostname"
        echo "$nspawn_recipe" > "$base/.smartarray-ci-complete"
    fi
    flock -u 9
    mkdir -p "$1/root" "$1/upper" "$1/ovlwork"
    if mount -t overlay overlay -o "lowerdir=$base,upperdir=$1/upper,workdir=$1/ovlwork" \
        "$1/root" 2>/dev/null; then
        nspawn_mounts+=("$1/root")
    else
        say "no overlayfs here: copying the root"
        cp -a "$base/." "$1/root/"
    fi
}

nspawn_prepare() {  # nspawn_prepare WORK: the root to boot, at WORK/root ($root)
    nspawn_overlay "$1"
    root="$1/root"
}

# Where the host reaches PyPI through a proxy with a CA of its own, PIP_CERT (as pip reads it)
# names that CA; it is copied into a root for the build's pip. A real server needs none.
nspawn_pip_cert() {  # nspawn_pip_cert ROOT: prints PIP_CERT=... for env, or nothing
    [ -n "${PIP_CERT:-}" ] || return 0
    cp "$PIP_CERT" "$1/etc/smartarray-ci-pip.pem"
    echo PIP_CERT=/etc/smartarray-ci-pip.pem
}

nspawn_run() {  # nspawn_run ROOT CMD...: CMD in ROOT, not booted, on the host's network
    systemd-nspawn -q -D "$1" --register=no --keep-unit --resolv-conf=copy-host --pipe \
        env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        $(nspawn_pip_cert "$1") "${@:2}" < /dev/null
}

doc_block() {  # doc_block FILE HEADING [N]: the lines of the Nth (default: first) ```sh block
    # after HEADING in a document of the checkout
    awk -v heading="$2" -v want="${3:-1}" '$0 == heading { section = 1 }
        section && /^```sh/ { n++; block = 1; next }
        block && /^```/ { if (n == want) exit; block = 0; next }
        block && n == want' "$repo/$1"
}

nspawn_build_deb() {  # nspawn_build_deb OUT: the .deb built in a fresh root of the release by
    # docs/packaging.md's lines, run as a script runs them (not under -e: the first line's
    # s=$(command -v sudo) is false where there is no sudo), copied into OUT
    local build="$work/build" lines
    lines=$(doc_block docs/packaging.md "## Building the packages")
    [ -n "$lines" ] || fail "no sh block under '## Building the packages' in docs/packaging.md"
    nspawn_overlay "$build"
    mkdir -p "$build/root/root/smartarray-agent"
    tar -C "$repo" --exclude=./.git --exclude=./dist --exclude='*/__pycache__' -cf - . \
        | tar -C "$build/root/root/smartarray-agent" -xf -
    say "building the .deb in a fresh root: $(paste -sd ';' <<<"$lines")"
    nspawn_run "$build/root" bash -c "cd /root/smartarray-agent; $lines" > "$work/build.log" 2>&1 \
        || { tail -n 30 "$work/build.log"; fail "the build"; }
    mkdir -p "$1"
    cp "$build/root/root/smartarray-agent/dist/"smartarray-agent_*.deb "$1/"
}

nspawn_deb() {  # nspawn_deb [DEB]: $deb: DEB, or the release's .deb built from this checkout
    # (nspawn_build_deb), once per test run where $SMARTARRAY_NSPAWN_DEBS names the run's
    # directory (tests/nspawn.py), else into $work
    deb=$1
    if [ -z "$deb" ]; then
        local debs=${SMARTARRAY_NSPAWN_DEBS:-$work/dist}/$nspawn_release
        mkdir -p "$debs"
        exec 7>"$debs/.lock"
        flock 7  # one build per release; the others wait for it
        [ -n "$(find "$debs" -name 'smartarray-agent_*.deb')" ] || nspawn_build_deb "$debs"
        flock -u 7
        deb=$(find "$debs" -name 'smartarray-agent_*.deb' -print -quit)
    fi
    [ -f "$deb" ] || fail "no package at $deb"
    say "package: ${deb##*/} ($(du -h "$deb" | cut -f1))"
}

nspawn_install_deb() {  # nspawn_install_deb DEB LOG: apt-get install in the root, not booted,
    # with the release's archive for the dependencies
    cp "$1" "$root/var/tmp/"
    nspawn_run "$root" sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends /var/tmp/${1##*/}" \
        > "$2" 2>&1 || { tail -n 30 "$2"; fail "apt-get install ./${1##*/}"; }
}

in_ct() { nsenter -t "$leader" -a "$@"; }

nspawn_boot() {  # nspawn_boot MACHINE CONSOLE_LOG [host-network]: boot, wait until running
    # or degraded. CAP_SYS_RAWIO is not in nspawn's default set; give it so the units' bounding
    # set can be checked as on a host. The network is loopback alone unless asked for. In a
    # cgroup of its own (own-cgroup.sh): containers of other scripts may run beside it.
    local network=--private-network
    [ "${3:-}" = host-network ] && network=--resolv-conf=copy-host
    "$repo/packaging/nspawn/own-cgroup.sh" \
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

nspawn_fetch() {  # nspawn_fetch URL: the body, fetched from inside the container by the
    # package's interpreter
    in_ct /opt/smartarray-agent/bin/python -c 'import sys, urllib.request
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
    for mount in "${nspawn_mounts[@]}"; do
        [ -n "$mount" ] && umount "$mount"
    done
    rm -rf "$1"
}
