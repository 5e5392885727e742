#!/usr/bin/env bash
# Builds slackindex for release and installs it under PREFIX (default ~/.local): PREFIX/bin/slackindex (and
# slackindex-mcp, which `slackindex mcp` starts), the man page
# PREFIX/share/man/man1/slackindex.1 and completions for bash, zsh and fish. Needs only what the build needs.
#
# The man page comes from argument-parser's own `generate-manual` tool, built in the same release build folder
# (about 20 s more) and run on the binary: its package plugin (`swift package generate-manual`) builds the whole
# package again and had not finished after 20 minutes on a 2-core machine (measured 2026-11-28).
#
# Usage: scripts/install.sh [PREFIX]
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-$HOME/.local}"
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"

swift build -c release --product slackindex
swift build -c release --product slackindex-mcp
binary=.build/release/slackindex
install -Dm755 "$binary" "$prefix/bin/slackindex"
# `slackindex mcp` starts it from the same folder.
install -Dm755 .build/release/slackindex-mcp "$prefix/bin/slackindex-mcp"

# The man page, from the command's own help.
swift build -c release --product generate-manual
pages=$(mktemp -d)
trap 'rm -rf "$pages"' EXIT
.build/release/generate-manual "$binary" --output-directory "$pages"
install -Dm644 "$pages/slackindex.1" "$prefix/share/man/man1/slackindex.1"

"$binary" --generate-completion-script bash | install -Dm644 /dev/stdin "$prefix/share/bash-completion/completions/slackindex"
"$binary" --generate-completion-script zsh | install -Dm644 /dev/stdin "$prefix/share/zsh/site-functions/_slackindex"
"$binary" --generate-completion-script fish | install -Dm644 /dev/stdin "$prefix/share/fish/vendor_completions.d/slackindex.fish"

echo "Installed $("$prefix/bin/slackindex" --version) into $prefix."
case ":$PATH:" in
*":$prefix/bin:"*) ;;
*) echo "Add $prefix/bin to your PATH (e.g. in ~/.profile: export PATH=\"$prefix/bin:\$PATH\")." ;;
esac
