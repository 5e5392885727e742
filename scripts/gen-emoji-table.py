#!/usr/bin/env python3
"""Writes Sources/SlackIndex/Render/EmojiTable.swift from the PyPI package `emoji` (pip install emoji).

Slack's standard shortcodes follow GitHub's and CLDR's names, which `emoji` carries as `en` and `alias`.
Skin-tone variants are left out: `:thumbsup::skin-tone-3:` is the base emoji plus a modifier (U+1F3FB...).
"""
import sys

import emoji

names = {}
for e, v in sorted(emoji.EMOJI_DATA.items(), key=lambda kv: kv[1]["en"]):
    if v.get("status") != 2 or any(0x1F3FB <= ord(c) <= 0x1F3FF for c in e):
        continue
    for n in [v["en"]] + v.get("alias", []):
        n = n.strip(":").lower().replace("-", "_")
        if n and " " not in n:
            names.setdefault(n, e)
body = "\n".join(f"{k} {v}" for k, v in sorted(names.items()))
assert '"""' not in body and "\\" not in body
out = f'''// Generated from the Python package `emoji` {emoji.__version__} (BSD licence; names from Unicode CLDR and GitHub's
// aliases, which Slack's standard set follows): fully-qualified emoji without skin tones, one "name emoji" per
// line, `-` in names written `_`. Regenerate with scripts/gen-emoji-table.py.

/// Slack's standard emoji by shortcode name, as text (a dictionary literal of this size takes minutes to
/// type-check; this string is parsed once, on first use).
package let standardEmojiTable = """
{body}
"""
'''
path = sys.argv[1] if len(sys.argv) > 1 else "Sources/SlackIndex/Render/EmojiTable.swift"
open(path, "w").write(out)
print(f"{len(names)} names -> {path}")
