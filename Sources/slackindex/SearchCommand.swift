import ArgumentParser
import Foundation
import SlackIndex

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the archive with Slack's query syntax.",
        discussion: """
            Words, "exact phrases", -excluded words, prefix* and Slack's modifiers: in:#channel, in:@user
            (a DM), from:@user, to:@user, with:@user, before:/after:/on:YYYY-MM-DD, during:2024-05 (or a
            year, or a month name), has:link, has:file, has:reaction, has:pin, has::emoji:, is:thread,
            and -in:/-from:. Dates are days in --tz. A query of filters alone lists the newest matches.
            Anything the parser cannot use is searched as words, and stderr says so.

            Exit status: 0 with hits, 1 with none, 64 for a bad flag or an empty query.

            Examples:
              slackindex search deploy
              slackindex search '"release notes" in:#general after:2024-05-01' --limit 5
              slackindex search 'from:@ann has:link' --sort newest --json
              slackindex search outage --count
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, csv
    }

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The query (-word excludes a word; it is not read as a flag).")
    var query: [String] = []

    @Option(help: "How many results at most.")
    var limit = 20

    @Option(help: "relevance (bm25 blended with recency), newest or oldest.")
    var sort: SearchSort = .relevance

    @Flag(help: "Print only the number of matching messages.")
    var count = false

    @Flag(help: "One JSON object per result line (same as --format json).")
    var json = false

    @Option(help: "text, json (one object per line) or csv.")
    var format: Format = .text

    @Flag(help: "No bold or colour, even on a terminal.")
    var noColor = false

    @Option(help: ArgumentHelp("Time zone for dates (default: the system's), e.g. Europe/Paris.", valueName: "zone"))
    var tz: String?

    @Option(
        help: ArgumentHelp(
            "Who 'me' is in from:me (default: $SLACKINDEX_ME, else \"me\" in ~/.config/slackindex/config.json).",
            valueName: "handle"))
    var me: String?

    @Option(name: .customLong("in"), help: ArgumentHelp("Same as in:NAME in the query.", valueName: "conversation"))
    var inConversation: [String] = []

    @Option(help: ArgumentHelp("Same as from:NAME in the query.", valueName: "user"))
    var from: [String] = []

    @Option(help: ArgumentHelp("Same as after:DATE in the query.", valueName: "date"))
    var after: String?

    @Option(help: ArgumentHelp("Same as before:DATE in the query.", valueName: "date"))
    var before: String?

    @Option(help: ArgumentHelp("Same as has:KIND in the query (link, file, reaction, pin, :emoji:).", valueName: "kind"))
    var has: [String] = []

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1.") }
        if let tz, TimeZone(identifier: tz) == nil {
            throw ValidationError("--tz '\(tz)' is not a time zone; use a name such as Europe/Paris or UTC.")
        }
        if query.isEmpty && inConversation.isEmpty && from.isEmpty && after == nil && before == nil && has.isEmpty {
            throw ValidationError("Give a query, e.g. slackindex search deploy, or a filter flag such as --in general.")
        }
    }

    /// The query with the flag filters appended in Slack's own syntax.
    var fullQuery: String {
        func quoted(_ value: String) -> String {
            value.contains(where: \.isWhitespace) ? "\"\(value.replacingOccurrences(of: "\"", with: ""))\"" : value
        }
        var parts = [query.joined(separator: " ")]
        parts += inConversation.map { "in:" + quoted($0) }
        parts += from.map { "from:" + quoted($0) }
        if let after { parts.append("after:" + after) }
        if let before { parts.append("before:" + before) }
        parts += has.map { "has:" + $0 }
        return parts.filter { !$0.isEmpty }.joined(separator: " ")
    }

    func run() throws {
        let archive = try global.openArchive()
        let engine = SearchEngine(archive: archive)
        var options = SearchOptions()
        options.limit = limit
        options.sort = sort
        options.timeZone = tz.flatMap(TimeZone.init(identifier:)) ?? .current
        options.me = try me ?? ProcessInfo.processInfo.environment["SLACKINDEX_ME"] ?? Config.load().me
        let text = fullQuery
        if count {
            let (total, notes) = try engine.count(text, options: options)
            for note in notes { Output.error("note: \(note)") }
            Output.line(String(total))
            if total == 0 { throw ExitCode(1) }
            return
        }
        let results = try engine.search(text, options: options)
        for note in results.notes { Output.error("note: \(note)") }
        let format = json ? .json : format
        switch format {
        case .json:
            for hit in results.hits {
                Output.json(MessageJSON(message: hit.message, snippet: hit.snippet, score: hit.score))
            }
        case .csv:
            Output.line("conversation_id,conversation,ts,user_id,user,text,thread_ts,permalink")
            for hit in results.hits {
                let m = hit.message
                let fields = [
                    m.conversationID, m.conversation, m.ts, m.userID ?? "", m.user ?? "", m.text, m.threadTS ?? "",
                    m.permalink ?? "",
                ]
                Output.line(fields.map(Output.csvField).joined(separator: ","))
            }
        case .text:
            if results.hits.isEmpty { Output.error("No messages match '\(text)'.") }
            let color = Output.stdoutIsTTY && !noColor
            for hit in results.hits {
                let m = hit.message
                let header =
                    "\(Output.bold(m.conversation, color: color))  \(m.user ?? "unknown")  "
                    + Output.dim(Output.localTime(m.seconds, timeZone: options.timeZone), color: color)
                    + (m.threadTS != nil && m.threadTS != m.ts ? Output.dim("  (in thread)", color: color) : "")
                Output.line(header)
                Output.line("  " + Output.highlighted(Output.oneLine(hit.snippet, width: 400), color: color))
                Output.flush()
            }
        }
        if results.hits.isEmpty { throw ExitCode(1) }
    }
}

extension SearchSort: ExpressibleByArgument {}
