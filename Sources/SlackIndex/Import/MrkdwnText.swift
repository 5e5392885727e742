/// Turns Slack mrkdwn into the plain text that search indexes and snippets show.
///
/// - `<@U1>` / `<@U1|name>` → `@` + the user's shown name; the id and the user's other names go to `extra`.
/// - `<#C1|general>` / `<#C1>` → `#general` (the label, else the directory's name, else the id).
/// - `<!here>` / `<!channel>` / `<!everyone>` → `@here` …; `<!subteam^S1|@team>` → `@team`;
///   `<!date^…|fallback>` → the fallback.
/// - `<https://x.y/z|label>` → `label`, the URL to `extra`; `<https://x.y/z>` → the URL.
/// - `&amp;` `&lt;` `&gt;` → `&` `<` `>`.
/// - Emoji shortcodes (`:tada:`) and formatting characters stay: the tokenizer splits them into words.
package struct MrkdwnText: Sendable, Equatable {
    /// The readable text: what snippets show and the first FTS column indexes.
    package var text: String
    /// Words that should find the message but would clutter a snippet (ids, other names, URLs).
    package var extra: String
    /// True when the text links to something (`<http…>`, `<mailto:…>`).
    package var hasLink: Bool

    /// Normalises one mrkdwn string.
    ///
    /// - Complexity: O(n) in the text's UTF-8 length.
    package static func normalize(_ mrkdwn: String, names: NameDirectory) -> MrkdwnText {
        var source = mrkdwn
        // Nothing to rewrite (most messages): the text itself, sharing its storage. A copy made here was a second
        // string per message on the reader thread and in the messages waiting to be written.
        if !source.withUTF8(SearchTextColumn.holdsMarkup) { return MrkdwnText(text: source, extra: "", hasLink: false) }
        var out: [UInt8] = []
        var extra: [UInt8] = []
        var hasLink = false
        source.withUTF8 { bytes in
            out.reserveCapacity(bytes.count)
            var i = 0
            let n = bytes.count
            while i < n {
                let byte = bytes[i]
                if byte == UInt8(ascii: "&") {
                    if let (decoded, length) = entity(bytes, at: i) {
                        out.append(decoded)
                        i += length
                        continue
                    }
                    out.append(byte)
                    i += 1
                } else if byte == UInt8(ascii: "<") {
                    var j = i + 1
                    while j < n, bytes[j] != UInt8(ascii: ">"), bytes[j] != UInt8(ascii: "<") { j += 1 }
                    guard j < n, bytes[j] == UInt8(ascii: ">"), j > i + 1 else {
                        out.append(byte)
                        i += 1
                        continue
                    }
                    let inner = bytes[(i + 1)..<j]
                    rewrite(inner, names: names, out: &out, extra: &extra, hasLink: &hasLink)
                    i = j + 1
                } else {
                    out.append(byte)
                    i += 1
                }
            }
        }
        return MrkdwnText(
            text: String(decoding: out, as: UTF8.self), extra: String(decoding: extra, as: UTF8.self),
            hasLink: hasLink)
    }

    private static func entity(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> (UInt8, Int)? {
        let n = bytes.count
        func matches(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard i + count <= n else { return false }
            let lit = literal.utf8Start
            for k in 0..<count where bytes[i + k] != lit[k] { return false }
            return true
        }
        if matches("&amp;") { return (UInt8(ascii: "&"), 5) }
        if matches("&lt;") { return (UInt8(ascii: "<"), 4) }
        if matches("&gt;") { return (UInt8(ascii: ">"), 4) }
        return nil
    }

    /// Over 60 lines: a single-pass byte scanner over `<…>` references and entities; its state (output buffer,
    /// position) is local, and splitting the cases would copy it per call on the import's hot path.
    private static func rewrite(
        _ inner: Slice<UnsafeBufferPointer<UInt8>>, names: NameDirectory, out: inout [UInt8], extra: inout [UInt8],
        hasLink: inout Bool
    ) {
        let bar = inner.firstIndex(of: UInt8(ascii: "|"))
        let target = inner[inner.startIndex..<(bar ?? inner.endIndex)]
        let label = bar.map { inner[($0 + 1)..<inner.endIndex] }
        let decodedLabel = label.map { decodeEntities($0) }
        func appendExtra(_ string: String) {
            guard !string.isEmpty else { return }
            if !extra.isEmpty { extra.append(UInt8(ascii: " ")) }
            extra.append(contentsOf: string.utf8)
        }
        switch target.first {
        case UInt8(ascii: "@"):
            let id = String(decoding: target.dropFirst(), as: UTF8.self)
            out.append(UInt8(ascii: "@"))
            if let user = names.users[id] {
                out.append(contentsOf: user.shown.utf8)
                appendExtra(id)
                appendExtra(user.others)
            } else if let decodedLabel, !decodedLabel.isEmpty {
                out.append(contentsOf: decodedLabel.drop(while: { $0 == "@" }).utf8)
                appendExtra(id)
            } else {
                out.append(contentsOf: id.utf8)
            }
        case UInt8(ascii: "#"):
            let id = String(decoding: target.dropFirst(), as: UTF8.self)
            out.append(UInt8(ascii: "#"))
            if let decodedLabel, !decodedLabel.isEmpty {
                out.append(contentsOf: decodedLabel.utf8)
            } else if let name = names.channels[id] {
                out.append(contentsOf: name.utf8)
            } else {
                out.append(contentsOf: id.utf8)
            }
            appendExtra(id)
        case UInt8(ascii: "!"):
            let command = String(decoding: target.dropFirst(), as: UTF8.self)
            if let decodedLabel, !decodedLabel.isEmpty {
                if command.hasPrefix("subteam^"), !decodedLabel.hasPrefix("@") { out.append(UInt8(ascii: "@")) }
                out.append(contentsOf: decodedLabel.utf8)
            } else {
                let word = command.split(separator: "^").first.map(String.init) ?? command
                out.append(UInt8(ascii: "@"))
                out.append(contentsOf: word.utf8)
            }
        default:
            let url = decodeEntities(target)
            let lower = url.lowercased()
            if lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("mailto:")
                || lower.hasPrefix("ftp://") || lower.hasPrefix("tel:")
            {
                hasLink = true
            }
            if let decodedLabel, !decodedLabel.isEmpty {
                out.append(contentsOf: decodedLabel.utf8)
                appendExtra(url)
            } else {
                out.append(contentsOf: url.utf8)
            }
        }
    }

    private static func decodeEntities(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        let string = String(decoding: bytes, as: UTF8.self)
        guard string.utf8Contains(UInt8(ascii: "&")) else { return string }
        return string.replacingAll("&lt;", "<").replacingAll("&gt;", ">").replacingAll("&amp;", "&")
    }
}

extension String {
    /// Replaces every occurrence of `target` (no Foundation needed).
    func replacingAll(_ target: String, _ replacement: String) -> String {
        guard !target.isEmpty, contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
