#!/usr/bin/env bash
# own-cgroup.sh CMD...: run CMD (systemd-nspawn) in a cgroup of its own. With --keep-unit a
# container runs in its caller's cgroup (here the host's PID 1 is not systemd: no scope to
# register), and two containers booted side by side in one cgroup would each take the other's
# processes for its own. Under each cgroup hierarchy without a controller (systemd's named one,
# and the unified one of a hybrid or cgroup v2 host), this process moves to a child of its
# cgroup named after it; those of processes that are gone are removed first.
set -euo pipefail
mapfile -t memberships < /proc/self/cgroup
for membership in "${memberships[@]}"; do
    IFS=: read -r _ controllers path <<<"$membership"
    case $controllers in
        name=systemd) hierarchy=/sys/fs/cgroup/systemd ;;
        "") hierarchy=/sys/fs/cgroup/unified; [ -d "$hierarchy" ] || hierarchy=/sys/fs/cgroup ;;
        *) continue ;;
    esac
    parent=$hierarchy${path%/}
    [ -w "$parent/cgroup.procs" ] || continue
    for stale in "$parent"/smartarray-nspawn-*; do  # with what the container's systemd made in it
        [ -d "$stale" ] && ! kill -0 "${stale##*-}" 2>/dev/null \
            && find "$stale" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
    mkdir -p "$parent/smartarray-nspawn-$$"
    echo $$ > "$parent/smartarray-nspawn-$$/cgroup.procs"
done
exec "$@"
