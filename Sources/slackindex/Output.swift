import Foundation
import SlackIndex

#if canImport(Glibc)
    import Glibc
#endif

/// The only place that writes to the terminal: stdout for results, stderr for progress and diagnostics.
enum Output {
    static let stdoutIsTTY = isatty(1) == 1
    static let stderrIsTTY = isatty(2) == 1

    /// Whether results on stdout get bold, dim and highlight: `--color auto` (the default: on a terminal, unless
    /// `NO_COLOR` is set to anything non-empty, see no-color.org), `always` or `never`. Set once by `main` before a
    /// command runs.
    nonisolated(unsafe) static var color = stdoutIsTTY

    /// Applies `--color` (nil: auto) and the environment's `NO_COLOR`.
    static func configureColor(_ choice: String?, environment: [String: String]) {
        switch choice {
        case "always": color = true
        case "never": color = false
        default: color = stdoutIsTTY && (environment["NO_COLOR"] ?? "").isEmpty
        }
        hyperlinks = MessageRenderer.hyperlinksSupported(environment: environment, color: color, isTTY: stdoutIsTTY)
    }

    /// Whether links in messages are written as OSC 8 hyperlinks (their text clickable, the URL not repeated)
    /// rather than `text (url)`. Set with `color` by `configureColor`.
    nonisolated(unsafe) static var hyperlinks = false

    /// The rendered lines with their link markers as OSC 8 hyperlinks (or removed, when `hyperlinks` is off); a
    /// link wrapped over lines is closed at each line's end and opened again on the next. The data in the lines is
    /// made safe for the terminal first, so only these sequences can make a link.
    static func hyperlinked(_ rendered: MessageRenderer.Rendered) -> [String] {
        var links = rendered.links.makeIterator()
        var open: String?
        return rendered.lines.map { line in
            var out = ""
            if let open { out += osc8(open) }
            for character in terminalText(line, isTTY: true, own: []) {
                if character == MessageRenderer.linkStart {
                    open = links.next()
                    if let open { out += osc8(open) }
                } else if character == MessageRenderer.linkEnd {
                    if open != nil { out += osc8("") }
                    open = nil
                } else {
                    out.append(character)
                }
            }
            if open != nil { out += osc8("") }
            return out
        }
    }

    /// `ESC ] 8 ; ; URL ESC \`: opens a hyperlink to `url`, or closes one when `url` is empty.
    private static func osc8(_ url: String) -> String { "\u{1B}]8;;\(url)\u{1B}\\" }

    /// Prints one line of results.
    static func line(_ text: String) {
        print(terminalText(text, isTTY: stdoutIsTTY))
    }

    /// Prints a line to stderr.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((terminalText(text, isTTY: stderrIsTTY) + "\n").utf8))
    }

    /// Writes to stderr without a newline (progress bars, which start with `\r`).
    static func errorRaw(_ text: String) {
        FileHandle.standardError.write(Data(terminalText(text, isTTY: stderrIsTTY, keepingReturn: true).utf8))
    }

    /// The sequences this tool writes itself (bold, dim, highlight, reset, clear to end of line): style only,
    /// nothing that moves the cursor, clears the screen, sets the title or the clipboard.
    /// `]8;;` and `\\` are OSC 8 hyperlinks, only written by `hyperlinked` after the data is made safe.
    private static let ownSequences: [[Unicode.Scalar]] = ["[0m", "[1m", "[2m", "[1;33m", "[K", "]8;;", "\\"].map {
        Array($0.unicodeScalars)
    }

    /// `text` as the terminal receives it. On a terminal, control characters from the data (ESC, BEL, `\r`, C1
    /// codes…) are shown as visible symbols (U+241B for ESC) instead of acting on the terminal; newline and tab
    /// stay, and so do the style sequences this tool writes (`ownSequences`). Piped output keeps the bytes as
    /// they are, for scripts.
    static func terminalText(
        _ text: String, isTTY: Bool, keepingReturn: Bool = false, own: [[Unicode.Scalar]] = ownSequences
    ) -> String {
        guard isTTY, text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) })
        else { return text }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            switch scalar.value {
            case 0x1B where own.contains { scalars[(index + 1)...].starts(with: $0) }: out.append(scalar)
            case 0x0A, 0x09: out.append(scalar)
            case 0x0D where keepingReturn: out.append(scalar)
            case 0x00..<0x20: out.append(Unicode.Scalar(0x2400 + scalar.value) ?? "\u{FFFD}")
            case 0x7F: out.append("\u{2421}")
            case 0x80..<0xA0: out.append("\u{FFFD}")
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// The columns of the terminal: `COLUMNS` when set (tests, scripts), else the terminal's size on a terminal,
    /// else nil (no wrapping).
    static func terminalWidth(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int? {
        if let columns = environment["COLUMNS"].flatMap(Int.init), (20...10_000).contains(columns) { return columns }
        guard stdoutIsTTY else { return nil }
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 20 else { return 80 }
        return Int(size.ws_col)
    }

    /// Prints an Encodable value as one line of JSON.
    static func json(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return }
        print(String(decoding: data, as: UTF8.self))
    }

    static func flush() {
        fflush(nil)
    }

    static func bold(_ text: String, color: Bool = Output.color) -> String {
        color ? "\u{1B}[1m\(text)\u{1B}[0m" : text
    }
    static func dim(_ text: String, color: Bool = Output.color) -> String {
        color ? "\u{1B}[2m\(text)\u{1B}[0m" : text
    }

    /// A CSV field, quoted when it holds a comma, quote or newline (RFC 4180).
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A snippet with Slack's U+E000/U+E001 markers turned into bold yellow with colour, else into `mark` on both
    /// sides (`**` in JSON; nothing in piped text unless `--highlight MARK`).
    static func highlighted(_ snippet: String, color: Bool, mark: String = "**") -> String {
        let (open, close) = color ? ("\u{1B}[1;33m", "\u{1B}[0m") : (mark, mark)
        return snippet.replacingOccurrences(of: Highlight.start, with: open)
            .replacingOccurrences(of: Highlight.end, with: close)
    }

    /// `2024-06-12 14:03` in the given time zone.
    static func localTime(_ seconds: Int64, timeZone: TimeZone = .current) -> String {
        Day.localMinute(seconds, in: timeZone)
    }

    /// `2024-06-12T14:03:05+02:00`: ISO 8601 with the zone's offset, for CSV.
    static func isoTime(_ seconds: Int64, timeZone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = timeZone
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// `1.2 GB`-style sizes.
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// `12,345`.
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
            out.append(character)
        }
        return out
    }

    /// Prints rows as aligned columns (two spaces apart), the header dimmed; `rightAligned` are column indexes
    /// (numbers). Widths count characters, so names in any script line up as long as they are not double-width.
    static func table(header: [String], rows: [[String]], rightAligned: Set<Int> = []) {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
        }
        func format(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                if index == cells.count - 1 && !rightAligned.contains(index) { return cell }
                return rightAligned.contains(index) ? pad + cell : cell + pad
            }.joined(separator: "  ")
        }
        line(dim(format(header)))
        for row in rows { line(format(row)) }
    }

    /// One line of text without newlines, cut to `width` characters (`MessageRenderer.oneLine`).
    static func oneLine(_ text: String, width: Int) -> String { MessageRenderer.oneLine(text, width: width) }
}

/// A message as the JSON lines of `search` and `history` show it.
struct MessageJSON: Encodable {
    var message: Message
    var snippet: String?
    var score: Double?
    var details: MessageDetails?
    /// Merged search only: where the hit came from, whether the remote's answer is missing, its permalink.
    var source: String?
    var partial: Bool?
    var permalinkOverride: String?
    /// History `--around TS`: the message asked for (`"target": true`).
    var isTarget = false
    /// Search: the attached file the words were found in (`"matched_file"`).
    var matchedFile: String?
    /// Search: the team id of the hit's conversation (`"workspace_id"`), `.some(nil)` for null when unknown; nil
    /// leaves the key out (history).
    var workspaceID: String??

    init(message: Message, snippet: String? = nil, score: Double? = nil, details: MessageDetails? = nil) {
        self.message = message
        self.snippet = snippet
        self.score = score
        self.details = details
    }

    private enum CodingKeys: String, CodingKey {
        case conversationID = "conversation_id", conversation, ts, userID = "user_id", user, text, snippet
        case threadTS = "thread_ts", replyCount = "reply_count", subtype, edited, score, permalink
        case reactions, files, deleted, source, partial, target
        case matchedFile = "matched_file", workspaceID = "workspace_id"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(message.conversationID, forKey: .conversationID)
        try c.encode(message.conversation, forKey: .conversation)
        if let workspaceID { try c.encode(workspaceID, forKey: .workspaceID) }
        try c.encode(message.ts, forKey: .ts)
        try c.encode(message.userID, forKey: .userID)
        try c.encode(message.user, forKey: .user)
        try c.encode(message.text, forKey: .text)
        try c.encode(message.threadTS, forKey: .threadTS)
        try c.encode(message.replyCount, forKey: .replyCount)
        try c.encode(message.subtype, forKey: .subtype)
        try c.encode(message.editedTS, forKey: .edited)
        try c.encode(message.permalink ?? permalinkOverride, forKey: .permalink)
        try c.encodeIfPresent(source, forKey: .source)
        try c.encodeIfPresent(partial, forKey: .partial)
        if isTarget { try c.encode(true, forKey: .target) }
        if let snippet { try c.encode(Output.highlighted(snippet, color: false), forKey: .snippet) }
        try c.encodeIfPresent(matchedFile, forKey: .matchedFile)
        if let details {
            try c.encode(details.reactions.map { ReactionJSON(name: $0.name, count: $0.count, users: $0.users) }, forKey: .reactions)
            try c.encode(details.files, forKey: .files)
            try c.encode(message.isDeleted, forKey: .deleted)
        }
        if let score { try c.encode(score, forKey: .score) }
    }
}

/// A reaction in JSON output.
struct ReactionJSON: Encodable {
    var name: String
    var count: Int
    var users: [String]
}
