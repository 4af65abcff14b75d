#!/usr/bin/env bash
# Lay out the installed tree of smartarray-agent under a staging directory, for build-deb.sh
# and build-rpm.sh: a self-contained virtual environment in /opt/smartarray-agent built from
# the project's wheel, the systemd units, the sg modules-load.d entry, the default config,
# logrotate for the audit log, bash, zsh and fish completion, the man page and the copyright file.
#
#   packaging/stage.sh STAGE_DIR
#
# A package is built on the release it is for (docs/packaging.md, "One package per release"):
# the environment links to that release's Python and holds the wheels pip picks for that
# interpreter and that C library. Needs the target Python with venv (Debian and Ubuntu:
# python3-venv; its ensurepip gives the build its own pip; no system pip), binutils (strip) and
# network access to PyPI.
# Environment:
#   TARGET_PYTHON  the interpreter the package runs on, at the same path on the target. Default:
#                  the release's /usr/bin/python3 under its versioned name (/usr/bin/python3.11
#                  on Debian 12, 3.13 on Debian 13, 3.12 on Ubuntu 24.04 and RHEL 10), or
#                  /usr/bin/python3.12 where that python3 is older than 3.11 (RHEL 9's 3.9)
#   SOURCE_DATE_EPOCH  the date of every file (default: the last commit's; reproducible.sh)
set -euo pipefail

stage=${1:?usage: stage.sh STAGE_DIR}
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/packaging/reproducible.sh"
target_python=${TARGET_PYTHON:-$(/usr/bin/python3 -c 'import sys
print("/usr/bin/python%d.%d" % sys.version_info[:2] if sys.version_info >= (3, 11) else "/usr/bin/python3.12")' 2>/dev/null || echo /usr/bin/python3.12)}
prefix=/opt/smartarray-agent

[ -x "$target_python" ] || {
    echo "stage.sh: $target_python not found: install it (Debian, Ubuntu: apt-get install python3-venv; RHEL 9: dnf install python3.12) or set TARGET_PYTHON" >&2
    exit 1
}
command -v strip >/dev/null || { echo "stage.sh: strip not found (install binutils)" >&2; exit 1; }
py_version=$("$target_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# The versioned name, which the package depends on: /usr/bin/python3 moves to the next Python
# with the release, and the bundled compiled wheels would not load in it.
target_python="$(dirname "$target_python")/python$py_version"
"$target_python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "stage.sh: $target_python is older than the agent needs (3.11)" >&2
    exit 1
}

rm -rf "$stage"
mkdir -p "$stage"
stage=$(cd "$stage" && pwd)
venv="$stage$prefix"
site="$venv/lib/python$py_version/site-packages"
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

# 1. The wheel of this checkout, built from a copy (setuptools writes build/ and *.egg-info
# into the tree it builds) with the pip of a throw-away venv of the target Python.
"$target_python" -m venv "$build/venv"
pip=("$build/venv/bin/python" -m pip --disable-pip-version-check --quiet)
mkdir "$build/src" "$build/wheels"
cp -a "$repo/pyproject.toml" "$repo/README.md" "$repo/agent" "$repo/collectors" "$repo/common" \
    "$repo/simulator" "$build/src/"
find "$build/src" -name '__pycache__' -prune -exec rm -rf {} +
# The commit the package comes from, for smartarray_build_info{revision} (agent/revision.py);
# outside a git checkout of its own the agent says "unknown".
if [ "$(git -C "$repo" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$repo" && pwd -P)" ]; then
    printf '"""Written by packaging/stage.sh: the commit this package was built from."""\n\nREVISION = "%s"\n' \
        "$(git -C "$repo" rev-parse --verify HEAD)" > "$build/src/agent/_revision.py"
fi
"${pip[@]}" wheel --no-deps --wheel-dir "$build/wheels" "$build/src"
wheel=$(find "$build/wheels" -maxdepth 1 -name 'smartarray_agent-*.whl')

# 2. A virtual environment at its final path, without pip: nothing installs into it on the
# target. bin/python stays a symlink to the target's interpreter.
"$target_python" -m venv --without-pip "$venv"
"${pip[@]}" --python "$venv/bin/python" install --no-compile --no-warn-script-location "$wheel"
# PyYAML's C extension embeds its own copy of libyaml (Debian forbids embedded copies); the
# pure-Python loader it falls back to reads the small web config as well.
rm -f "$site"/yaml/_yaml.*.so
rm -rf "$site/_yaml"
# Library modules that open with a #! line are imported, never run: the line is blanked (not
# removed, so that tracebacks keep their line numbers).
find "$site" -type f -name '*.py' ! -perm -u+x -exec sed -i '1s/^#!.*$//' {} +
# The wheels' shared objects carry symbols and debug sections nothing here uses.
find "$venv" -type f -name '*.so*' -exec strip --strip-unneeded --remove-section=.comment \
    --remove-section=.note {} +

# Console scripts name the staging path in their #! line; point them at the final one.
for script in "$venv"/bin/*; do
    if [ ! -f "$script" ] || [ -L "$script" ]; then continue; fi
    if [ "$(head -c 2 "$script" | tr -d '\0')" = '#!' ]; then
        sed -i "1s|^#!$venv/bin/python|#!$prefix/bin/python|" "$script"
    fi
done
# pyvenv.cfg names the interpreter's directory and the command that made it.
sed -i "s|$stage||g" "$venv/pyvenv.cfg"
# Keep the interpreter links and this project's commands; drop the dependencies' own
# commands (pip, normalizer, ...) and whatever names the build machine.
for entry in "$venv"/bin/*; do
    case "${entry##*/}" in
        python|python3|python3.*|smartarray-agent|smartarray-sim) ;;
        *) rm -f "$entry" ;;
    esac
done
find "$venv" -name direct_url.json -delete
find "$venv" -name '__pycache__' -prune -exec rm -rf {} +
# Byte-compile for the final path; unchecked-hash: the package manager owns these files and the
# unit's ProtectSystem=strict would stop Python from rewriting them anyway.
"$target_python" -m compileall -q -j 0 --invalidation-mode unchecked-hash \
    -s "$stage" -p / "$site" >/dev/null
# pip's RECORD files list files removed above and give the old hash of those changed above (a
# console script's covered the staging directory in its #! line): list the files as packaged.
"$target_python" -I "$repo/packaging/record.py" "$site"
if grep -rIl --exclude='*.pyc' -- "$stage" "$venv" >/dev/null; then
    echo "stage.sh: the staging path is still named in:" >&2
    grep -rIl --exclude='*.pyc' -- "$stage" "$venv" >&2
    exit 1
fi

# 3. Commands on PATH.
install -d "$stage/usr/bin"
ln -s "$prefix/bin/smartarray-agent" "$stage/usr/bin/smartarray-agent"

# 4. systemd units, the sg module, and the group and directory of the unprivileged serving
#    unit, which answers HTTP for the root daemon (the packaged config.toml sets
#    [web] publish_dir; docs/privileges.md).
install -d "$stage/usr/lib/systemd/system" "$stage/usr/lib/modules-load.d" "$stage/usr/lib/sysusers.d" \
    "$stage/usr/lib/tmpfiles.d"
install -m 0644 "$repo"/systemd/smartarray-agent.service "$repo"/systemd/smartarray-agent-textfile.service \
    "$repo"/systemd/smartarray-agent-textfile.timer "$repo"/systemd/smartarray-agent-serve.service \
    "$stage/usr/lib/systemd/system/"
install -m 0644 "$repo/systemd/modules-load.d/smartarray-agent.conf" "$stage/usr/lib/modules-load.d/"
install -m 0644 "$repo/systemd/sysusers.d/smartarray-agent.conf" "$stage/usr/lib/sysusers.d/"
install -m 0644 "$repo/systemd/tmpfiles.d/smartarray-agent.conf" "$stage/usr/lib/tmpfiles.d/"

# 5. Configuration, completion, manual, documents.
install -D -m 0644 "$repo/packaging/config.toml" "$stage/etc/smartarray-agent/config.toml"
install -d "$stage/usr/share/bash-completion/completions"
# typer's bash script, asked for by name (--show-completion would detect the building shell)
_SMARTARRAY_AGENT_COMPLETE=source_bash "$venv/bin/python" -m smartarray_agent \
    > "$stage/usr/share/bash-completion/completions/smartarray-agent"
grep -q 'complete .*smartarray-agent' "$stage/usr/share/bash-completion/completions/smartarray-agent"
# zsh's and fish's, where their packages look for other packages' completions (the .rpm moves
# zsh's to site-functions).
install -d "$stage/usr/share/zsh/vendor-completions" "$stage/usr/share/fish/vendor_completions.d"
_SMARTARRAY_AGENT_COMPLETE=source_zsh "$venv/bin/python" -m smartarray_agent \
    > "$stage/usr/share/zsh/vendor-completions/_smartarray-agent"
_SMARTARRAY_AGENT_COMPLETE=source_fish "$venv/bin/python" -m smartarray_agent \
    > "$stage/usr/share/fish/vendor_completions.d/smartarray-agent.fish"
install -d "$stage/usr/share/man/man8"
"$venv/bin/python" "$repo/packaging/manpage.py" | gzip -9n > "$stage/usr/share/man/man8/smartarray-agent.8.gz"
doc="$stage/usr/share/doc/smartarray-agent"
install -d "$doc"
install -m 0644 "$repo/README.md" "$doc/"
for f in "$repo"/docs/*.md; do install -m 0644 "$f" "$doc/"; done
# What Prometheus, Alertmanager and Grafana load, and the runbooks the alerts link to: not in
# /usr/share/doc, which nothing may depend on (Debian Policy 12.3) and minimal images strip.
share="$stage/usr/share/smartarray-agent"
install -d "$share/prometheus" "$share/grafana"
install -m 0644 "$repo/packaging/prometheus/alerts.yml" "$repo/packaging/prometheus/alertmanager.yml" "$share/prometheus/"
install -m 0644 "$repo/packaging/grafana/dashboard.json" "$repo/packaging/grafana/fleet.json" "$share/grafana/"
install -m 0644 "$repo/docs/runbooks.md" "$share/"
# The monitoring mixin those rules, the Alertmanager example and the dashboards are generated
# from: an operator regenerates them with other runbook links, job or thresholds
# (docs/packaging.md, "The mixin").
install -d "$share/mixin/dashboards"
install -m 0644 "$repo"/packaging/mixin/*.libsonnet "$repo/packaging/mixin/generate.py" "$share/mixin/"
install -m 0644 "$repo"/packaging/mixin/dashboards/*.libsonnet "$share/mixin/dashboards/"
# Nagios/Icinga: a sudoers drop-in, an NRPE command and an Icinga 2 CheckCommand, examples only
# (docs/nagios.md); the plugin's link is the build scripts' (its directory differs).
install -d "$doc/examples"
install -m 0644 "$repo/packaging/nagios/sudoers" "$repo/packaging/nagios/nrpe.cfg" "$repo/packaging/nagios/icinga2.conf" "$doc/examples/"
"$venv/bin/python" -I "$repo/packaging/copyright.py" "$site" "${site#"$stage"}" > "$doc/copyright"

# 6. The audit log's rotation: rename, never copy and truncate (see the file).
install -D -m 0644 "$repo/packaging/logrotate" "$stage/etc/logrotate.d/smartarray-agent"

dates_to_epoch "$stage"
echo "$stage"
