#!/usr/bin/env bash
# Build dist/smartarray-agent-VERSION-RELEASE.x86_64.rpm from this checkout with rpmbuild
# (on Debian: apt-get install rpm).
#   packaging/build-rpm.sh [OUT_DIR]      (default OUT_DIR: dist/)
# The package runs on RHEL/Rocky/Alma 8 and 9 with their python3.11 package installed.
# Environment: see stage.sh (TARGET_PYTHON, PIP, WHEEL_DIR).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$repo/dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

version=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$repo/pyproject.toml")
release=${RPM_RELEASE:-1}
stage="$work/stage"
"$repo/packaging/stage.sh" "$stage" /usr/lib/systemd/system >/dev/null

sed -e "s|@VERSION@|$version|" -e "s|@RELEASE@|$release|" -e "s|@STAGE@|$stage|" \
    "$repo/packaging/rpm/smartarray-agent.spec.in" > "$work/smartarray-agent.spec"
rpmbuild -bb --quiet \
    --define "_topdir $work/rpmbuild" \
    --define "_rpmdir $out" \
    --define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
    --define "_binary_payload w2.xzdio" \
    "$work/smartarray-agent.spec" >/dev/null
echo "$out/smartarray-agent-$version-$release.x86_64.rpm"
