import ArgumentParser
import Foundation
import SlackIndex

struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the archive with Slack's query syntax.",
        discussion: """
            Words, "exact phrases", -excluded words, prefix* and Slack's modifiers: in:#channel, in:@user \
            (a DM), from:@user, to:@user, with:@user, before:/after:/on:/during: with a date (2024-05-01, \
            2024-05, 2024, may, today, yesterday, monday, "last week", "last month", "3 days ago"), \
            has:link, has:file, has:reaction, has:pin, has::emoji:, is:thread, and -in:/-from:. Dates are days in --tz. A query of filters alone lists the newest matches. \
            Anything the parser cannot use is searched as words, and stderr says so.

            A word also finds its English forms (deploy: deployed, deploying, deploys, deployment), the exact \
            form ranked first; "quoted" words and phrases, prefix* and words with digits or accents match as \
            typed; -word excludes every form; --exact turns forms off. Relevance is bm25 (a form counts a fifth of an \
            exact word) blended with recency. When a word matches (almost) nothing, stderr suggests words of \
            the archive one typo away (with --json, a last line {"suggestions": [...], "query": ...}); --fix \
            searches the suggestion instead.

            With --remote URL (or "remote" in the config file) the query also runs on a Slack-compatible \
            search.messages service (Slack, or another archive's `serve`; token from \
            SLACKINDEX_REMOTE_TOKEN or "remote_token" in the config file, or for slack.com your Slack token). Both run at once; hits are merged by reciprocal rank fusion, one per \
            conversation and ts, each marked local, remote or both. The remote gets --deadline seconds; \
            when it is slow, failing or rate-limited the local hits print anyway, stderr says why, and \
            JSON lines carry "partial": true.

            Exit status: 0 with hits, 1 with none, 2 with hits that --save-remote could not store (said on \
            stderr), 64 for a bad flag or an empty query.

            Examples:
              slackindex search deploy
              slackindex search '"release notes" in:#general after:2024-05-01' --limit 5
              slackindex search 'from:@ann has:link' --sort newest --json
              slackindex search outage --count
              slackindex search deplyo --fix
              slackindex search deploy --remote http://127.0.0.1:8080/api/ --deadline 1
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

    @Flag(help: "Print only the number of matching messages in the archive (a remote is not asked).")
    var count = false

    @Flag(help: "One JSON object per result line (same as --format json).")
    var json = false

    @Option(help: "text, json (one object per line) or csv.")
    var format: Format = .text

    @Flag(help: "No bold or colour, even on a terminal (same as --color never).")
    var noColor = false

    @Option(
        help: ArgumentHelp(
            "Without colour, put MARK on both sides of each match in text output (default: nothing).",
            valueName: "mark"))
    var highlight: String?

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

    @Option(
        help: ArgumentHelp(
            "Also search this Slack-compatible Web API (default: the config file's \"remote\").", valueName: "url"))
    var remote: String?

    @Flag(help: "Search the archive only, even if the config file names a remote.")
    var noRemote = false

    @Option(help: ArgumentHelp("Seconds to wait for the remote at most.", valueName: "seconds"))
    var deadline = 1.5

    @Flag(help: "Store remote hits the archive does not have, so they are there offline.")
    var saveRemote = false

    @Flag(help: "Match words exactly: no English variants (deploy finds neither deployed nor deploying).")
    var exact = false

    @Flag(help: "When a word matches (almost) nothing, search its likeliest correction instead (did you mean).")
    var fix = false

    func validate() throws {
        guard deadline > 0, deadline <= 600 else { throw ValidationError("--deadline must be between 0 and 600 seconds.") }
        guard limit > 0 else { throw ValidationError("--limit must be at least 1.") }
        if let tz, TimeZone(identifier: tz) == nil {
            throw ValidationError("--tz '\(tz)' is not a time zone; use a name such as Europe/Paris or UTC.")
        }
        let today = Day.today(in: tz.flatMap(TimeZone.init(identifier:)) ?? .current)
        for (flag, value) in [("--after", after), ("--before", before)] {
            if let value, DateExpression.parse(value, today: today) == nil {
                throw ValidationError("\(flag) '\(value)' is not a date. Dates are \(DateExpression.acceptedForms).")
            }
        }
        if query.isEmpty && inConversation.isEmpty && from.isEmpty && after == nil && before == nil && has.isEmpty {
            throw ValidationError("Give a query, e.g. slackindex search deploy, or a filter flag such as --in general.")
        }
    }

    /// The query as typed, with the flag filters added as filters (not turned back into text); a flag value the
    /// filter cannot take is searched the way the query would search `name:value`, with its note.
    func parsedQuery(_ engine: SearchEngine, options: SearchOptions) -> SearchQuery {
        var flags = inConversation.map { ("in", $0) } + from.map { ("from", $0) }
        flags += [after.map { ("after", $0) }, before.map { ("before", $0) }].compactMap { $0 }
        flags += has.map { ("has", $0) }
        return engine.parse(query.joined(separator: " "), filters: flags, options: options)
    }

    /// The archive, read-only unless --save-remote must write what the remote found; when it cannot be opened for
    /// writing (a read-only file or mount), read-only all the same, with why nothing will be stored.
    private func openArchive() throws -> (Archive, saveRefused: String?) {
        guard saveRemote else { return (try global.openArchive(.readOnly), nil) }
        do {
            return (try global.openExistingArchive(), nil)
        } catch StoreError.cannotOpen(_, let reason) {
            let why = "the remote hits could not be stored: the archive cannot be opened for writing (\(reason))"
            return (try global.openArchive(.readOnly), why)
        }
    }

    /// Over 60 lines: flags to options, the local or merged search, and the three output formats; each branch is
    /// a few lines of printing that reads best next to the flag it serves.
    func run() async throws {
        let (archive, saveRefused) = try openArchive()
        let engine = SearchEngine(archive: archive)
        var options = SearchOptions()
        options.limit = limit
        options.sort = sort
        options.wordVariants = !exact
        options.suggest = true
        options.timeZone = tz.flatMap(TimeZone.init(identifier:)) ?? .current
        let config = try Config.load()
        options.me = me ?? ProcessInfo.processInfo.environment["SLACKINDEX_ME"] ?? config.me
        let parsed = parsedQuery(engine, options: options)
        if let unread = parsed.unreadDates.first {
            // Slack searches a date it cannot read as words; here that would quietly match nothing.
            throw CommandError(
                description: "'\(unread)' does not hold a date. Dates are \(DateExpression.acceptedForms).", status: ExitStatus.usage)
        }
        let text = query.joined(separator: " ")
        if count {
            let (total, notes) = try engine.count(parsed, text: text, options: options)
            for note in notes { Output.error("note: \(note)") }
            Output.line(String(total))
            if total == 0 { throw ExitCode(ExitStatus.failure) }
            return
        }
        let hits: [SearchHit]
        var partial: Bool?
        var saveFailed = false
        var suggestions: [WordSuggestion] = []
        if let remoteURL = noRemote ? nil : remote ?? config.remote {
            let client = try SlackWebClient(
                baseURL: remoteURL, token: try Config.remoteToken(for: remoteURL),
                policy: .interactive(deadline: .seconds(deadline)))
            let results: MergedSearchResults
            do {
                results = try await engine.search(
                    parsed, text: text, options: options, remote: SlackRemoteSearch(client: client),
                    deadline: .seconds(deadline), saveRemote: saveRemote && saveRefused == nil)
            } catch {
                Task { await client.shutdown() }
                throw error
            }
            // The connection pool closes in the background: a slow remote must not hold the answer back.
            Task { await client.shutdown() }
            for note in results.notes { Output.error("note: \(note)") }
            if let problem = results.remoteProblem { Output.error("warning: \(problem)") }
            if results.saved > 0 { Output.error("Saved \(results.saved) remote messages in the archive.") }
            if let problem = saveRefused ?? results.saveProblem { Output.error("warning: \(problem)") }
            saveFailed = saveRefused != nil || results.saveProblem != nil
            hits = results.hits
            partial = results.partial
        } else {
            var results = try engine.search(parsed, text: text, options: options)
            if fix, !results.suggestions.isEmpty {
                let corrected = engine.corrected(parsed, with: results.suggestions)
                Output.error("Searched for '\(corrected.slackSyntax)' instead (--fix).")
                results = try engine.search(corrected, text: corrected.slackSyntax, options: options)
            }
            for note in results.notes { Output.error("note: \(note)") }
            hits = results.hits
            suggestions = results.suggestions
        }
        let format = json ? .json : format
        switch format {
        case .json:
            for hit in hits {
                var line = MessageJSON(message: hit.message, snippet: hit.snippet, score: hit.score)
                line.permalinkOverride = hit.remotePermalink
                line.matchedFile = hit.matchedFile
                if let partial {
                    line.source = hit.source.rawValue
                    line.partial = partial
                }
                Output.json(line)
            }
        case .csv:
            Output.line(
                "conversation_id,conversation,ts,date,user_id,user,text,thread_ts,permalink" + (partial != nil ? ",source" : ""))
            for hit in hits {
                let m = hit.message
                var fields = [
                    m.conversationID, m.conversation, m.ts, Output.isoTime(m.seconds, timeZone: options.timeZone),
                    m.userID ?? "", m.user ?? "", m.text, m.threadTS ?? "", hit.permalink ?? "",
                ]
                if partial != nil { fields.append(hit.source.rawValue) }
                Output.line(fields.map(Output.csvField).joined(separator: ","))
            }
        case .text:
            if hits.isEmpty { Output.error("No messages match '\(text)'.") }
            let color = Output.color && !noColor
            let width = Output.terminalWidth()
            for hit in hits {
                let m = hit.message
                // The handle opens the hit in context: `slackindex history HANDLE` (or `thread HANDLE`).
                let handle = m.handle
                let header =
                    "\(Output.bold(m.conversation, color: color))  \(m.user ?? "unknown")  "
                    + Output.dim(Output.localTime(m.seconds, timeZone: options.timeZone), color: color)
                    + (m.threadTS != nil && m.threadTS != m.ts ? Output.dim("  (in thread)", color: color) : "")
                    + (partial != nil ? Output.dim("  [\(hit.source.rawValue)]", color: color) : "")
                    + (hit.matchedFile.map { Output.dim("  (in file \(Output.oneLine($0, width: 80)))", color: color) } ?? "")
                    + Output.dim("  \(handle)", color: color)
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
        if !suggestions.isEmpty {
            let corrected = engine.corrected(parsed, with: suggestions).slackSyntax
            if format == .json {
                Output.json(SuggestionsJSON(suggestions: suggestions, query: corrected))
            } else {
                let words = suggestions.map { "\($0.word) → \($0.replacement) (\(Output.count($0.messages)))" }
                Output.error("Did you mean: \(corrected)?  [\(words.joined(separator: ", "))]; --fix searches it.")
            }
        }
        if hits.count == limit, partial == nil, format == .text {
            // One more query, capped: it stops at 1,000 matches, so a common word costs milliseconds, not a
            // count of the whole index.
            let cap = 1_000
            let total = try engine.count(parsed, text: text, options: options, cap: cap).0
            if total >= cap {
                Output.error("\(Output.count(hits.count)) of \(Output.count(cap)) or more shown; --count for how many.")
            } else if total > hits.count {
                Output.error("\(Output.count(hits.count)) of \(Output.count(total)) shown; --limit \(total) for all.")
            }
        }
        if hits.isEmpty { throw ExitCode(ExitStatus.failure) }
        if saveFailed { throw ExitCode(ExitStatus.partial) }
    }
}

extension SearchSort: ExpressibleByArgument {}

/// The last line of `search --json` when a word matched (almost) nothing: the corrections and the corrected query.
struct SuggestionsJSON: Encodable {
    var suggestions: [WordSuggestion]
    /// The query with each word replaced by its best correction (what `--fix` searches).
    var query: String
}
