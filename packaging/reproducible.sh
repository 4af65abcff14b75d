# Sourced by stage.sh, build-deb.sh and build-rpm.sh, with $repo set to the checkout: what makes
# two builds of one checkout byte-identical (https://reproducible-builds.org), and what the two
# build scripts read of the staged tree.
#
# SOURCE_DATE_EPOCH is every date the build writes into a package: the files' and the archive
# members' times, the rpm's build time, the man page's date. Given in the environment, it is
# kept (a build of a release sets it); otherwise it is the time of the checkout's last commit,
# or, outside a git checkout, the date of the latest entry of packaging/deb/changelog.
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    if [ "$(git -C "$repo" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$repo" && pwd -P)" ]; then
        SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct)
    else
        SOURCE_DATE_EPOCH=$(date -d "$(sed -n 's/^ -- .*>  //p' "$repo/packaging/deb/changelog" | head -n 1)" +%s)
    fi
fi
case $SOURCE_DATE_EPOCH in
    '' | *[!0-9]*) echo "${0##*/}: SOURCE_DATE_EPOCH is not a number of seconds: '$SOURCE_DATE_EPOCH'" >&2; exit 1 ;;
esac
export SOURCE_DATE_EPOCH
# The modes of what venv and pip create do not depend on the builder's umask.
umask 022

# dates_to_epoch DIR: DIR and everything under it (links themselves, not their targets) dated
# SOURCE_DATE_EPOCH, whenever it was made or copied.
dates_to_epoch() {
    find "$1" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}

# staged_version STAGE_DIR: the version of the agent's wheel in a tree stage.sh laid out
# (pyproject.toml's), read from its dist-info directory: no TOML reader needed on the builder.
staged_version() {
    local info
    info=$(cd "$1"/opt/smartarray-agent/lib/python3.*/site-packages && echo smartarray_agent-*.dist-info)
    info=${info#smartarray_agent-}
    echo "${info%.dist-info}"
}

# staged_python STAGE_DIR: the interpreter the environment links to (bin/python names
# bin/python3.X, which names it).
staged_python() {
    local bin="$1/opt/smartarray-agent/bin"
    readlink "$bin/$(readlink "$bin/python")"
}
