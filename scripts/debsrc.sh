# Sourced by the scripts that build a Debian package's source for the tests.
# debsrc DIR PKG: unpacks Debian's source of PKG into DIR/src/PKG. The
# source comes through apt with a private configuration (a deb-src entry of
# its own, its own lists and cache under DIR): the machine's apt sources
# are not changed.
debsrc() {
    local dir=$1 pkg=$2
    mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
    dir=$(cd "$dir" && pwd)
    printf '%s\n' "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] \
http://deb.debian.org/debian bookworm main" > "$dir/apt/sources.list"
    set -- -q -o Dir::Etc::SourceList="$dir/apt/sources.list" \
        -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$dir/apt/lists" \
        -o Dir::Cache="$dir/apt/cache" -o Debug::NoLocking=1
    rm -rf "$dir/src"
    mkdir -p "$dir/src"
    (
        cd "$dir/src"
        apt-get "$@" update >&2
        apt-get "$@" source --download-only "$pkg" >&2
        dpkg-source -x "${pkg}"_*.dsc "$pkg" >&2
    )
}
