#!/usr/bin/env bash
# Builds slackindex for release and installs it under PREFIX (default ~/.local): PREFIX/bin/slackindex and completions
# for bash, zsh and fish; with --man also the man page PREFIX/share/man/man1/slackindex.1 (argument-parser's
# generate-manual plugin builds its tool and the package again: over 20 minutes on a 2-core machine, measured
# 2026-11-28, so it is asked for). Needs only what the build needs.
#
# Usage: scripts/install.sh [--man] [PREFIX]
set -euo pipefail
cd "$(dirname "$0")/.."
man=0
if [ "${1:-}" = "--man" ]; then
    man=1
    shift
fi
prefix="${1:-$HOME/.local}"
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"

swift build -c release --static-swift-stdlib --product slackindex
binary=.build/release/slackindex
install -Dm755 "$binary" "$prefix/bin/slackindex"

# The man page, from the command's own help (argument-parser's generate-manual plugin).
if [ "$man" -eq 0 ]; then
    echo "install: no man page (scripts/install.sh --man adds it; it takes long); \`slackindex --help\` has the same text."
elif swift package --allow-writing-to-package-directory generate-manual >/dev/null 2>&1 \
    && page=$(find .build/plugins -name slackindex.1 -print -quit) && [ -n "$page" ]; then
    install -Dm644 "$page" "$prefix/share/man/man1/slackindex.1"
else
    echo "install: the man page could not be generated (the rest is installed)" >&2
fi

"$binary" --generate-completion-script bash | install -Dm644 /dev/stdin "$prefix/share/bash-completion/completions/slackindex"
"$binary" --generate-completion-script zsh | install -Dm644 /dev/stdin "$prefix/share/zsh/site-functions/_slackindex"
"$binary" --generate-completion-script fish | install -Dm644 /dev/stdin "$prefix/share/fish/vendor_completions.d/slackindex.fish"

echo "Installed $("$prefix/bin/slackindex" --version) into $prefix."
case ":$PATH:" in
*":$prefix/bin:"*) ;;
*) echo "Add $prefix/bin to your PATH (e.g. in ~/.profile: export PATH=\"$prefix/bin:\$PATH\")." ;;
esac
