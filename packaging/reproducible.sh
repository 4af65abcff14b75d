# Sourced by stage.sh, build-deb.sh and build-rpm.sh, with $repo set to the checkout: what makes
# two builds of one checkout byte-identical (https://reproducible-builds.org).
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
