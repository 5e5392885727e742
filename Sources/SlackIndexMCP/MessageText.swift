import Foundation
import SlackIndex

/// How much of each message an answer carries.
enum MessageFormat: String, CaseIterable, Sendable {
    /// One line a message, its text on one line cut at `MessageText.compactWidth` characters: sized for a model's
    /// context.
    case compact
    /// The whole text, with reactions, files and the permalink.
    case full

    /// The `format` argument's values.
    static let names = allCases.map(\.rawValue)
}

/// Messages as the text of a tool's answer.
///
/// Each message is named by its handle (`#general/1714000000.000100`, what search prints and every tool that
/// takes a message accepts), so an assistant can go from any line to its thread or surroundings.
struct MessageText {
    /// Characters of a message's text in compact answers.
    static let compactWidth = 300

    var format: MessageFormat
    var timeZone: TimeZone
    /// Reactions and files by message row id (full format only).
    var details: [Int64: MessageDetails] = [:]

    /// The message's lines; `marked` puts `▶` before the one a caller asked about.
    func lines(_ m: Message, marked: Bool = false) -> [String] {
        let time = Day.localMinute(m.seconds, in: timeZone)
        var notes = ""
        if m.editedTS != nil { notes += " (edited)" }
        if m.isDeleted { notes += " (deleted)" }
        if m.replyCount > 0 { notes += " [\(m.replyCount) \(m.replyCount == 1 ? "reply" : "replies")]" }
        if let thread = m.threadTS, thread != m.ts { notes += " (reply in thread \(thread))" }
        let head = (marked ? "▶ " : "") + "\(time)  \(m.user ?? m.userID ?? "unknown")  \(m.handle)\(notes)"
        let text = m.plainText.isEmpty ? m.text : m.plainText
        guard format == .full else {
            return [head, "  " + MessageRenderer.oneLine(text, width: MessageText.compactWidth)]
        }
        var lines = [head] + text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
        let extra = details[m.rowID] ?? MessageDetails()
        if !extra.reactions.isEmpty {
            lines.append("  reactions: " + extra.reactions.map { ":\($0.name): \($0.count)" }.joined(separator: "  "))
        }
        for file in extra.files {
            let name = file.name ?? file.title ?? file.id ?? "file"
            lines.append("  file: " + name + (file.mimetype.map { " (\($0))" } ?? ""))
        }
        if let link = m.permalink { lines.append("  permalink: \(link)") }
        return lines
    }

    /// A page of messages, oldest first, as lines.
    func page(_ messages: [Message], marked: Int64? = nil) -> [String] {
        messages.flatMap { lines($0, marked: $0.tsKey == marked) }
    }
}
