#!/usr/bin/env bash
# Build dist/smartarray-agent_VERSION+RELEASE_ARCH.deb from this checkout, with dpkg-deb (no
# debhelper), for the release it runs on (Debian 12 and 13, Ubuntu 24.04; docs/packaging.md):
#   packaging/build-deb.sh [OUT_DIR]      (default OUT_DIR: dist/; prints the package's path)
# Needs python3-venv, binutils, dpkg-dev (its Recommends are not needed: no compiler); network
# access to PyPI.
# The version and maintainer come from packaging/deb/changelog, whose upstream version must be
# the wheel's (pyproject.toml's); the release's ID and VERSION_ID (/etc/os-release) follow it,
# +deb12, +deb13, +ubuntu24.04, so that each release has its own package and an upgrade of the
# release upgrades it. Environment: see stage.sh (TARGET_PYTHON, SOURCE_DATE_EPOCH). Two builds
# of one checkout give the same bytes (reproducible.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/packaging/reproducible.sh"
out=${1:-$repo/dist}
for tool in dpkg-deb dpkg-parsechangelog dpkg-shlibdeps; do
    command -v "$tool" >/dev/null || { echo "build-deb.sh: $tool not found (apt-get install dpkg-dev)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

root="$work/root"
"$repo/packaging/stage.sh" "$root" >/dev/null
changelog="$repo/packaging/deb/changelog"
debian_version=$(dpkg-parsechangelog -l "$changelog" -S Version)
maintainer=$(dpkg-parsechangelog -l "$changelog" -S Maintainer)
version=$(staged_version "$root")
[ "${debian_version%-*}" = "$version" ] || {
    echo "build-deb.sh: packaging/deb/changelog is at $debian_version, pyproject.toml at $version: add a changelog entry" >&2
    exit 1
}
# shellcheck source=/dev/null
release=$(. /etc/os-release && echo "${ID/#debian/deb}${VERSION_ID:?no VERSION_ID in /etc/os-release}")
full_version="$debian_version+$release"
arch=$(dpkg --print-architecture)
# The release's own interpreter the environment links to (stage.sh): Debian and Ubuntu name
# its package after it.
python=$(basename "$(staged_python "$root")")

doc="$root/usr/share/doc/smartarray-agent"
gzip -9n < "$changelog" > "$doc/changelog.Debian.gz"
# The Nagios/Icinga plugin: run by this name, the program is `smartarray-agent check`.
install -d "$root/usr/lib/nagios/plugins"
ln -s /opt/smartarray-agent/bin/smartarray-agent "$root/usr/lib/nagios/plugins/check_smartarray"
install -D -m 0644 "$repo/packaging/deb/lintian-overrides" "$root/usr/share/lintian/overrides/smartarray-agent"

# The libraries the bundled shared objects link to (libc, libgcc_s), as dpkg-shlibdeps finds them.
mkdir -p "$work/shlibs/debian"
printf 'Source: smartarray-agent\n\nPackage: smartarray-agent\nArchitecture: any\n' > "$work/shlibs/debian/control"
mapfile -t objects < <(find "$root" -type f -name '*.so*')
shlibs=$(cd "$work/shlibs" && dpkg-shlibdeps -O "${objects[@]}" 2>"$work/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { cat "$work/shlibdeps.log" >&2; echo "build-deb.sh: dpkg-shlibdeps found no library dependency" >&2; exit 1; }

install -d -m 0755 "$root/DEBIAN"
# Installed-Size in KiB as dpkg-gencontrol counts it: each file's (or link's) size rounded up,
# 1 for each directory. du would count the blocks of the build machine's file system.
size=$(find "$root" -path "$root/DEBIAN" -prune -o -printf '%y %s\n' |
    awk '{ n += ($1 == "f" || $1 == "l") ? int(($2 + 1023) / 1024) : 1 } END { print n }')
sed -e "s/@VERSION@/$full_version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
    -e "s/@MAINTAINER@/$maintainer/" -e "s/@SHLIBS@/$shlibs/" -e "s/@PYTHON@/$python/" \
    "$repo/packaging/deb/control.in" > "$root/DEBIAN/control"
# The administrator's files: dpkg keeps their edits and asks on a changed default.
printf '%s\n' /etc/smartarray-agent/config.toml /etc/logrotate.d/smartarray-agent > "$root/DEBIAN/conffiles"
for script in preinst postinst prerm postrm; do
    install -m 0755 "$repo/packaging/deb/$script" "$root/DEBIAN/$script"
done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    > "$root/DEBIAN/md5sums"
# Every file dated SOURCE_DATE_EPOCH, which dpkg-deb also gives the archive's members.
dates_to_epoch "$root"

deb="$out/smartarray-agent_${full_version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
# dpkg-deb archives ./opt/ too, and dpkg removes a directory with its last owner: a purge took
# /opt away (Debian 12 gives it to no package). The package unpacks into /opt, never owning it.
python3 -I "$repo/packaging/unown.py" "$deb" ./opt/
echo "$deb"
