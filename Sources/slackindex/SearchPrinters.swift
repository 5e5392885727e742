import Foundation
import SlackIndex

/// How `search` prints what it found: one printer per output format, apart from the search itself (as ripgrep's
/// printers are apart from its searcher).
protocol HitPrinter {
    /// Prints the hits on stdout (and, for text, "no messages match" on stderr when there are none).
    func print(_ hits: [SearchHit])
    /// Prints "did you mean" after the hits: the corrections and the corrected query.
    func print(suggestions: [WordSuggestion], corrected: String)
}

extension HitPrinter {
    func print(suggestions: [WordSuggestion], corrected: String) {
        let words = suggestions.map { "\($0.word) → \($0.replacement) (\(Output.count($0.messages)))" }
        Output.error("Did you mean: \(corrected)?  [\(words.joined(separator: ", "))]; --fix searches it.")
    }
}

/// `--json`: one object per hit (`MessageJSON`), and the suggestions as a last line.
struct JSONHitPrinter: HitPrinter {
    /// Whether the remote answered in part; nil without a remote (then hits carry no `source`).
    var partial: Bool?
    /// The team id of each hit's conversation, by its Slack id (`workspace_id`; null where missing).
    var workspaceIDs: [String: String]

    func print(_ hits: [SearchHit]) {
        for hit in hits {
            var line = MessageJSON(message: hit.message, snippet: hit.snippet, score: hit.score)
            line.permalinkOverride = hit.remotePermalink
            line.matchedFile = hit.matchedFile
            line.workspaceID = .some(workspaceIDs[hit.message.conversationID])
            if let partial {
                line.source = hit.source.rawValue
                line.partial = partial
            }
            Output.json(line)
        }
    }

    func print(suggestions: [WordSuggestion], corrected: String) {
        Output.json(SuggestionsJSON(suggestions: suggestions, query: corrected))
    }
}

/// `--format csv`: a header, then one row per hit (times in ISO 8601 in the time zone asked for).
struct CSVHitPrinter: HitPrinter {
    var partial: Bool?
    var timeZone: TimeZone

    func print(_ hits: [SearchHit]) {
        Output.line(
            "conversation_id,conversation,ts,date,user_id,user,text,thread_ts,permalink" + (partial != nil ? ",source" : ""))
        for hit in hits {
            let m = hit.message
            var fields = [
                m.conversationID, m.conversation, m.ts, Output.isoTime(m.seconds, timeZone: timeZone),
                m.userID ?? "", m.user ?? "", m.text, m.threadTS ?? "", hit.permalink ?? "",
            ]
            if partial != nil { fields.append(hit.source.rawValue) }
            Output.line(fields.map(Output.csvField).joined(separator: ","))
        }
    }
}

/// The terminal: a header per hit (conversation, author, time, the handle `history` opens) and its snippet,
/// emoji rendered, wrapped at the terminal's width, matches highlighted.
struct TextHitPrinter: HitPrinter {
    var partial: Bool?
    var timeZone: TimeZone
    var color: Bool
    /// `--highlight`: marks around matches when there is no colour.
    var highlight: String?
    /// The query as typed, for "no messages match".
    var query: String

    func print(_ hits: [SearchHit]) {
        if hits.isEmpty { Output.error("No messages match '\(query)'.") }
        let width = Output.terminalWidth()
        for hit in hits {
            let m = hit.message
            // The handle opens the hit in context: `slackindex history HANDLE` (or `thread HANDLE`).
            let header =
                "\(Output.bold(m.conversation, color: color))  \(m.user ?? "unknown")  "
                + Output.dim(Output.localTime(m.seconds, timeZone: timeZone), color: color)
                + (m.threadTS != nil && m.threadTS != m.ts ? Output.dim("  (in thread)", color: color) : "")
                + (partial != nil ? Output.dim("  [\(hit.source.rawValue)]", color: color) : "")
                + (hit.matchedFile.map { Output.dim("  (in file \(Output.oneLine($0, width: 80)))", color: color) } ?? "")
                + Output.dim("  \(m.handle)", color: color)
            Output.line(header)
            // Snippets: one paragraph, emoji rendered, wrapped under a two-space indent at the terminal width.
            let snippet = MessageRenderer.emojified(Output.oneLine(hit.snippet, width: 400))
            let lines = width.map { MessageRenderer.wrap(snippet, width: $0 - 2, continuation: "") } ?? [snippet]
            for line in lines {
                Output.line("  " + Output.highlighted(line, color: color, mark: highlight ?? ""))
            }
            Output.flush()
        }
    }
}
