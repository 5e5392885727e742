#!/usr/bin/env bash
# Fails when building or running slackindex needs a Debian package a fresh machine of our kind does not have
# (.ci/fresh-image-packages.txt, the list of such a machine's packages): the headers the C targets compiled against
# (the compiler's dependency files under .build) and the shared libraries the binary loads (ldd), each mapped to
# its package with dpkg -S. Issue 48: the README's first command failed on a fresh machine ('libdeflate.h' file not
# found) while CI, which installed libdeflate-dev first, stayed green.
#
# Usage: scripts/check-build-packages.sh [BUILD_DIR]   (default .build/debug; run after a build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-.build/debug}"
fresh=.ci/fresh-image-packages.txt
binaries=("$build/slackindex" "$build/slackindex-mcp")
for binary in "${binaries[@]}"; do
    [ -x "$binary" ] || { echo "check-build-packages: no $binary; build first" >&2; exit 1; }
done

files=$(mktemp)
trap 'rm -f "$files"' EXIT
# System headers any C or Swift target of the build included (the compilers' dependency files; `-L`: .build/debug is
# a symbolic link), leaving out the packages' own sources under .build and the toolchain's.
find -L "$build" -name '*.d' -print0 2>/dev/null | xargs -0 -r cat \
    | tr ' \\' '\n\n' | grep -E '^/usr/(include|lib)/' | sort -u >>"$files" || true
# Shared libraries the binaries load from the system (not Swift's own runtime, which comes with the toolchain).
for binary in "${binaries[@]}"; do
    ldd "$binary" | awk '/=> \//{print $3}' | grep -E '^/(usr/)?lib' | sort -u >>"$files"
done

missing=0
owners=$(mktemp)
trap 'rm -f "$files" "$owners"' EXIT
sort -u -o "$files" "$files"
# One dpkg call for all the files ("pkg[:arch][, pkg2…]: path" per file found); files it does not know by their
# own path are asked again by their resolved path (merged /usr, library symlinks).
xargs -r -a "$files" dpkg -S 2>/dev/null >"$owners" || true
while read -r file; do
    grep -qF ": $file" "$owners" && continue
    real=$(readlink -f "$file")
    if found=$(dpkg -S "$real" 2>/dev/null); then
        echo "$found" >>"$owners"
    else
        echo "check-build-packages: $file belongs to no Debian package (installed by hand?)" >&2
        missing=1
    fi
done <"$files"
declare -A seen=()
while IFS= read -r line; do
    for entry in $(echo "${line%%: /*}" | tr ',' ' '); do
        pkg=${entry%%:*}
        [ -z "${seen[$pkg]:-}" ] || continue
        seen[$pkg]=1
        if ! grep -qxF "$pkg" "$fresh"; then
            echo "check-build-packages: the build needs $pkg (for ${line#*: }), which a fresh machine lacks" >&2
            missing=1
        fi
    done
done <"$owners"
if [ "$missing" -ne 0 ]; then
    echo "check-build-packages: install it from the README's first command, or stop needing it" >&2
    exit 1
fi
echo "check-build-packages: the build and the binary need only a fresh machine's packages (${#seen[@]} checked: ${!seen[*]})"
