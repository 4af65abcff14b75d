#!/usr/bin/env bash
# Build dist/smartarray-agent-VERSION-RELEASE.x86_64.rpm from this checkout with rpmbuild, for
# the release it runs on (RHEL, Rocky or Alma 9 and 10: dnf install rpm-build binutils, and on 9
# python3.12; on Debian: apt-get install rpm python3-venv binutils, for tests):
#   packaging/build-rpm.sh [OUT_DIR]      (default OUT_DIR: dist/; prints the package's path)
# RELEASE is RPM_RELEASE (default 1) and the release's %{dist} (.el9, .el10; none on Debian).
# The package requires the interpreter its environment links to (stage.sh), by path. The
# packager is the maintainer of packaging/deb/changelog. Lint it with its filters:
#   rpmlint -r packaging/rpm/smartarray-agent.rpmlintrc dist/smartarray-agent-*.rpm
# Environment: see stage.sh (TARGET_PYTHON, SOURCE_DATE_EPOCH); RPM_RELEASE (default 1). Two
# builds of one checkout give the same bytes (reproducible.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/packaging/reproducible.sh"
out=${1:-$repo/dist}
command -v rpmbuild >/dev/null || { echo "build-rpm.sh: rpmbuild not found (apt-get install rpm)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

release=${RPM_RELEASE:-1}
packager=$(sed -n '/^ -- .*>  /{s/^ -- \(.*>\)  .*/\1/p;q}' "$repo/packaging/deb/changelog")
stage="$work/stage"
"$repo/packaging/stage.sh" "$stage" >/dev/null
version=$(staged_version "$stage")
python=$(staged_python "$stage")
install -m 0644 "$repo/packaging/rpm/smartarray-agent.rpmlintrc" "$stage/usr/share/doc/smartarray-agent/"
# Fedora's and RHEL's zsh reads packages' completions from site-functions.
mv "$stage/usr/share/zsh/vendor-completions" "$stage/usr/share/zsh/site-functions"
# node_exporter's RPM (golang-github-prometheus-node-exporter) reads its textfiles from
# another directory than Debian's: the textfile unit writes there.
sed -i 's|/var/lib/prometheus/node-exporter|/var/lib/node_exporter/textfile_collector|g' \
    "$stage/usr/lib/systemd/system/smartarray-agent-textfile.service"
# The audit log's directory, which the logrotate entry names (systemd's StateDirectory= makes it
# on Debian too; rpm wants the package to own it). Kept on erase while it holds the log.
install -d -m 0750 "$stage/var/lib/smartarray-agent"
# The Nagios/Icinga plugin: run by this name, the program is `smartarray-agent check`.
install -d "$stage/usr/lib64/nagios/plugins"
ln -s /opt/smartarray-agent/bin/smartarray-agent "$stage/usr/lib64/nagios/plugins/check_smartarray"

# AutoReqProv is off (the bundled libraries provide nothing to the system); the C library the
# bundled shared objects need is required by hand, as rpm's own elfdeps names it.
find "$stage" -type f -name '*.so*' -print0 | xargs -0 /usr/lib/rpm/elfdeps --requires \
    | LC_ALL=C sort -u | sed 's/^/Requires:       /' > "$work/requires"
grep -q 'libc.so.6' "$work/requires" || { echo "build-rpm.sh: elfdeps found no libc requirement" >&2; exit 1; }

# Every file dated SOURCE_DATE_EPOCH (%install copies the tree with its dates).
dates_to_epoch "$stage"
sed -e "s|@VERSION@|$version|" -e "s|@RELEASE@|$release|" -e "s|@STAGE@|$stage|" \
    -e "s|@PACKAGER@|$packager|" -e "s|@PYTHON@|$python|" -e "/^Requires:       systemd$/r $work/requires" \
    "$repo/packaging/rpm/smartarray-agent.spec.in" > "$work/smartarray-agent.spec"
rpmbuild -bb --quiet \
    --define "_topdir $work/rpmbuild" \
    --define "_rpmdir $out" \
    --define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
    --define "_binary_payload w2.xzdio" \
    "$work/smartarray-agent.spec" >/dev/null
echo "$out/smartarray-agent-$version-$release$(rpm --eval '%{?dist}').x86_64.rpm"
