#!/usr/bin/env bash
# Build dist/smartarray-agent_VERSION_ARCH.deb from this checkout, with dpkg-deb (no debhelper).
#   packaging/build-deb.sh [OUT_DIR]      (default OUT_DIR: dist/)
# Environment: see stage.sh (TARGET_PYTHON, PIP, WHEEL_DIR).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$repo/dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

version=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$repo/pyproject.toml")
revision=${DEB_REVISION:-1}
arch=$(dpkg --print-architecture)
root="$work/root"
"$repo/packaging/stage.sh" "$root" /lib/systemd/system >/dev/null

install -d -m 0755 "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version-$revision/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
    "$repo/packaging/deb/control.in" > "$root/DEBIAN/control"
# The config is the administrator's: dpkg keeps their edits and asks on a changed default.
echo /etc/smartarray-agent/config.toml > "$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do
    install -m 0755 "$repo/packaging/deb/$script" "$root/DEBIAN/$script"
done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
    > "$root/DEBIAN/md5sums"

deb="$out/smartarray-agent_${version}-${revision}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
