import Foundation

/// Renders Slack mrkdwn for the terminal: whole messages, wrapped to a width with their line breaks, ``` code
/// blocks ``` kept as written, `>` quotes marked with a bar, `<url|text>` as text and URL, mentions and channel
/// references as names, standard emoji shortcodes (with skin tones) as emoji. Custom emoji stay `:name:`.
///
/// Plain text in, plain text out: the CLI adds its styles and passes data through `Output.terminalText`.
package struct MessageRenderer {
    /// Columns a line may take; nil: no wrapping (piped output without `COLUMNS`).
    package var width: Int?
    /// Shown names of users by id, for `<@U…>` mentions.
    package var userNames: [String: String] = [:]
    /// Shown names of conversations by id, for `<#C…>` references that carry no label.
    package var conversationNames: [String: String] = [:]
    /// Links as terminal hyperlinks: a link's text between `linkStart` and `linkEnd` (its URL in `Rendered.links`,
    /// in order) instead of `text (url)`; the CLI turns the markers into OSC 8 sequences.
    package var hyperlinks = false

    /// Opens a hyperlink's text (the next URL of `Rendered.links`); a private-use character, 0 columns wide.
    package static let linkStart: Character = "\u{E002}"
    /// Closes a hyperlink's text.
    package static let linkEnd: Character = "\u{E003}"

    /// A message's lines and, with `hyperlinks`, the URLs of its links in the order their markers appear.
    package struct Rendered {
        package var lines: [String]
        package var links: [String]
    }

    package init(width: Int?) {
        self.width = width
    }

    /// The message's lines, each at most `width - indent` columns (code lines excepted: they are never broken).
    package func lines(of mrkdwn: String, indent: Int) -> [String] {
        rendered(mrkdwn, indent: indent).lines
    }

    /// `lines(of:indent:)` with the URLs of the hyperlinks the lines mark (none unless `hyperlinks`).
    package func rendered(_ mrkdwn: String, indent: Int) -> Rendered {
        let room = width.map { max(20, $0 - indent) }
        var links: [String] = []
        var out: [String] = []
        var inCode = false
        for raw in mrkdwn.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = String(raw)
            // ``` opens or closes a code block; text on the fence's line belongs to the block.
            let fences = line.components(separatedBy: "```").count - 1
            if inCode || fences > 0 {
                let code = Self.entities(line.replacingOccurrences(of: "```", with: ""))
                if !(fences > 0 && code.trimmingCharacters(in: .whitespaces).isEmpty) { out.append("  " + code) }
                if fences % 2 == 1 { inCode.toggle() }
                continue
            }
            var prefix = ""
            if line.hasPrefix("&gt;") || line.hasPrefix(">") {
                line = String(line.dropFirst(line.hasPrefix("&gt;") ? 4 : 1))
                if line.hasPrefix(" ") { line.removeFirst() }
                prefix = "│ "
            }
            let text = prefix + inline(line, links: &links)
            out += room.map { Self.wrap(text, width: $0, continuation: prefix) } ?? [text]
        }
        while out.last?.isEmpty == true { out.removeLast() }
        return Rendered(lines: out, links: links)
    }

    /// One line of mrkdwn with its `<…>` references, entities and emoji rendered.
    package func inline(_ mrkdwn: String) -> String {
        var links: [String] = []
        return inline(mrkdwn, links: &links)
    }

    private func inline(_ mrkdwn: String, links: inout [String]) -> String {
        var out = ""
        // The link markers are this renderer's: the same characters in the data are dropped, so a message cannot
        // open or close a hyperlink.
        var rest = Substring(
            mrkdwn.contains(where: { $0 == Self.linkStart || $0 == Self.linkEnd })
                ? mrkdwn.filter { $0 != Self.linkStart && $0 != Self.linkEnd } : mrkdwn)
        while let open = rest.firstIndex(of: "<") {
            out += rest[..<open]
            guard let close = rest[open...].firstIndex(of: ">") else {
                out += rest[open...]
                rest = ""
                break
            }
            out += reference(String(rest[rest.index(after: open)..<close]), links: &links)
            rest = rest[rest.index(after: close)...]
        }
        out += rest
        return Self.emojified(Self.entities(out))
    }

    /// `@U1|name` → `@name`, `#C1|general` → `#general`, `!here` → `@here`, `url|label` → `label (url)`.
    private func reference(_ inner: String, links: inout [String]) -> String {
        let parts = inner.split(separator: "|", maxSplits: 1).map(String.init)
        let target = parts.first ?? ""
        let label = parts.count > 1 ? parts[1] : nil
        switch target.first {
        case "@":
            let id = String(target.dropFirst())
            return "@" + (userNames[id] ?? label ?? id)
        case "#":
            let id = String(target.dropFirst())
            return "#" + (label ?? conversationNames[id] ?? id)
        case "!":
            if let label { return label }
            let name = target.dropFirst().prefix { $0 != "^" }
            return "@" + name
        default:
            let bare = target.hasPrefix("mailto:") ? String(target.dropFirst(7)) : target
            if hyperlinks, let url = Self.hyperlinkTarget(target) {
                links.append(url)
                let text = label.flatMap { $0.isEmpty ? nil : $0 } ?? bare
                return "\(Self.linkStart)\(text)\(Self.linkEnd)"
            }
            guard let label, !label.isEmpty, label != target else { return target }
            return label == bare ? label : "\(label) (\(bare))"
        }
    }

    /// OSC 8 on a styled terminal known to support it (there is no query for it): iTerm2, WezTerm, VS Code,
    /// Ghostty, kitty, foot, Alacritty, Windows Terminal, Konsole and VTE-based terminals (GNOME Terminal,
    /// Tilix…) from VTE 0.50. `FORCE_HYPERLINK=1` turns them on anywhere (also in a pipe), `FORCE_HYPERLINK=0`
    /// off, as other tools read it.
    package static func hyperlinksSupported(environment: [String: String], color: Bool, isTTY: Bool) -> Bool {
        if let forced = environment["FORCE_HYPERLINK"], !forced.isEmpty { return forced != "0" }
        guard color, isTTY, environment["TERM"] != "dumb" else { return false }
        let program = environment["TERM_PROGRAM"] ?? ""
        let term = environment["TERM"] ?? ""
        if ["iTerm.app", "WezTerm", "vscode", "ghostty"].contains(program) { return true }
        if ["kitty", "foot", "alacritty", "ghostty"].contains(where: { term.contains($0) }) { return true }
        if environment["WT_SESSION"] != nil || environment["KONSOLE_VERSION"] != nil { return true }
        if let vte = environment["VTE_VERSION"].flatMap({ Int($0) }), vte >= 5000 { return true }
        return false
    }

    /// The URL an OSC 8 sequence may carry: printable ASCII only (anything else percent-encoded), at most 2,000
    /// bytes, and a scheme a terminal opens (http, https, mailto); nil otherwise (shown as text and URL).
    static func hyperlinkTarget(_ target: String) -> String? {
        let lower = target.lowercased()
        guard ["http://", "https://", "mailto:"].contains(where: { lower.hasPrefix($0) }) else { return nil }
        var url = ""
        for byte in target.utf8 {
            if (0x21...0x7E).contains(byte) {
                url.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                url += String(format: "%%%02X", byte)
            }
        }
        return url.utf8.count <= 2_000 ? url : nil
    }

    /// `&amp;`, `&lt;`, `&gt;` as Slack escapes them.
    static func entities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// `standardEmojiTable`'s bytes and where each of its lines starts. Names are looked up by binary search
    /// over the lines (the table is sorted by name): a dictionary of its 2,934 names cost ~3 ms to build at the
    /// first emoji of every run, a tenth of a short `search`; finding the line starts is one pass over 48 KB.
    static let emojiTable: (bytes: [UInt8], lines: [Int]) = {
        let bytes = Array(standardEmojiTable.utf8)
        var lines: [Int] = [0]
        lines.reserveCapacity(3_000)
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") && index + 1 < bytes.count {
            lines.append(index + 1)
        }
        return (bytes, lines)
    }()

    /// The emoji `standardEmojiTable` gives `name` (exact, lower case, `_` not `-`), or nil.
    ///
    /// - Complexity: O(log n) comparisons of names.
    static func standardEmoji(_ name: String) -> String? {
        let (bytes, lines) = emojiTable
        let key = Array(name.utf8)
        var low = 0
        var high = lines.count
        while low < high {
            let mid = (low + high) / 2
            let start = lines[mid]
            var space = start
            while space < bytes.count, bytes[space] != UInt8(ascii: " "), bytes[space] != UInt8(ascii: "\n") { space += 1 }
            let order = key.lexicographicallyPrecedes(bytes[start..<space])
            if order {
                high = mid
            } else if bytes[start..<space].lexicographicallyPrecedes(key) {
                low = mid + 1
            } else {
                guard space < bytes.count, bytes[space] == UInt8(ascii: " ") else { return nil }
                var end = space + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                return String(decoding: bytes[(space + 1)..<end], as: UTF8.self)
            }
        }
        return nil
    }

    /// The emoji for `name` (`thumbsup`, `+1`, `man-shrugging`, `wave::skin-tone-3`), or nil for a custom one.
    package static func emoji(_ name: String) -> String? {
        let parts = name.components(separatedBy: "::")
        guard let base = standardEmoji(parts[0].lowercased().replacingOccurrences(of: "-", with: "_")) else { return nil }
        guard parts.count == 2, parts[1].hasPrefix("skin-tone-"), let tone = Int(parts[1].dropFirst(10)),
            (2...6).contains(tone), let modifier = Unicode.Scalar(0x1F3FB + UInt32(tone - 2))
        else { return base }
        // The modifier follows the base emoji's first scalar (dropping an emoji-presentation selector).
        var scalars = Array(base.unicodeScalars.filter { $0 != "\u{FE0F}" })
        scalars.insert(modifier, at: min(1, scalars.count))
        return String(String.UnicodeScalarView(scalars))
    }

    /// `:name:` and `:name::skin-tone-N:` replaced by their emoji where they are standard ones.
    package static func emojified(_ text: String) -> String {
        guard text.contains(":") else { return text }
        var out = ""
        var rest = Substring(text)
        while let colon = rest.firstIndex(of: ":") {
            out += rest[..<colon]
            let after = rest[rest.index(after: colon)...]
            let name = after.prefix { $0.isLetter || $0.isNumber || "_+-".contains($0) }
            var end = name.endIndex
            var full = String(name)
            if end < after.endIndex, after[end...].hasPrefix("::skin-tone-") {
                let tone = after[after.index(end, offsetBy: 2)...].prefix { $0 != ":" }
                full += "::" + tone
                end = tone.endIndex
            }
            if !name.isEmpty, end < after.endIndex, after[end] == ":", name.count <= 64, let emoji = emoji(full) {
                out += emoji
                rest = after[after.index(after: end)...]
            } else {
                out += ":"
                rest = after
            }
        }
        return out + rest
    }

    /// One line of text without newlines, cut to `width` characters (an ellipsis ends a cut line).
    ///
    /// - Complexity: O(n).
    package static func oneLine(_ text: String, width: Int) -> String {
        let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return flat.count > width ? String(flat.prefix(max(0, width - 1))) + "…" : flat
    }

    /// `text` broken at spaces into lines of at most `width` columns (a longer word is cut); continuation lines
    /// start with `continuation` (the quote bar).
    package static func wrap(_ text: String, width: Int, continuation: String) -> [String] {
        guard columns(text) > width else { return [text] }
        var lines: [String] = []
        var line = ""
        var used = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            var word = String(word)
            var size = columns(word)
            if used > 0, used + 1 + size > width {
                lines.append(line)
                line = continuation
                used = columns(continuation)
            } else if used > 0 || !line.isEmpty {
                line += " "
                used += 1
            }
            while used + size > width, !word.isEmpty {
                // A word longer than a line: as much as fits, then the rest on the next.
                var piece = ""
                var pieceSize = 0
                for character in word {
                    let w = columns(String(character))
                    if used + pieceSize + w > width, pieceSize > 0 || used > 0 { break }
                    piece.append(character)
                    pieceSize += w
                }
                lines.append(line + piece)
                word.removeFirst(piece.count)
                size = columns(word)
                line = continuation
                used = columns(continuation)
            }
            line += word
            used += size
        }
        lines.append(line)
        return lines
    }

    /// Terminal columns `text` takes: 2 for wide (East Asian) characters and emoji, 0 for combining marks, the
    /// highlight markers U+E000/U+E001 and the link markers U+E002/U+E003.
    package static func columns(_ text: String) -> Int {
        var total = 0
        for character in text {
            guard let first = character.unicodeScalars.first else { continue }
            let v = first.value
            if first.properties.isEmojiPresentation || character.unicodeScalars.contains("\u{FE0F}") {
                total += 2
            } else if (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
                || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
                || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v)
            {
                total += 2
            } else if first.properties.generalCategory == .nonspacingMark || v < 0x20 || (0xE000...0xE003).contains(v) {
                // Combining marks, controls, the snippet's highlight markers and the link markers take no column.
                continue
            } else {
                total += 1
            }
        }
        return total
    }
}
