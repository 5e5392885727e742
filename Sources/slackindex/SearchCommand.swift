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
            Anything the parser cannot use is searched as words, and stderr says so. Where two workspaces \
            in the archive share a conversation's name, in:acme/#general names one (hits print it so); \
            --workspace searches one workspace's conversations only (a remote is asked as it is), and with it \
            in:#general is that workspace's. --json hits carry their workspace's team id (workspace_id).

            A word also finds its English inflections (deploy: deployed, deploying, deploys; not deployment), \
            messages holding every word as typed ranked first; "quoted" words and phrases, prefix* and words with \
            digits or accents match as typed; -word excludes every form; --exact turns forms off. Relevance is bm25 \
            (a form counts a fifth of a typed word) blended with recency. When a word matches (almost) nothing, stderr suggests words of \
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
    @OptionGroup var workspace: WorkspaceOption

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

    /// Flags to options, the local or merged search, then the chosen printer (`SearchPrinters.swift`) and the
    /// count line.
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
        if let filter = try workspace.filter(in: archive) { options.restrict(to: filter.conversations) }
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
        let format = json ? .json : format
        let found: Found
        if let remoteURL = noRemote ? nil : remote ?? config.remote {
            found = try await remoteSearch(
                remoteURL, engine: engine, parsed: parsed, text: text, options: options, saveRefused: saveRefused)
        } else {
            // Text output says how many matched when a page is full: the same prepared search counts them, capped
            // at `countCap` so a common word costs milliseconds, not a count of the whole index.
            var local = options
            if format == .text { local.countCap = Self.countCap }
            found = try localSearch(engine: engine, parsed: parsed, text: text, options: local)
        }
        let printer: any HitPrinter =
            switch format {
            case .json:
                JSONHitPrinter(partial: found.partial, workspaceIDs: try Self.workspaceIDs(of: found.hits, in: archive))
            case .csv: CSVHitPrinter(partial: found.partial, timeZone: options.timeZone)
            case .text:
                TextHitPrinter(
                    partial: found.partial, timeZone: options.timeZone, color: Output.color && !noColor,
                    highlight: highlight, query: text)
            }
        printer.print(found.hits)
        if !found.suggestions.isEmpty {
            printer.print(suggestions: found.suggestions, corrected: engine.corrected(parsed, with: found.suggestions).slackSyntax)
        }
        if found.hits.count == limit, let total = found.total {
            if total >= Self.countCap {
                Output.error("\(Output.count(found.hits.count)) of \(Output.count(Self.countCap)) or more shown; --count for how many.")
            } else if total > found.hits.count {
                Output.error("\(Output.count(found.hits.count)) of \(Output.count(total)) shown; --limit \(total) for all.")
            }
        }
        if found.hits.isEmpty { throw ExitCode(ExitStatus.failure) }
        if found.saveFailed { throw ExitCode(ExitStatus.partial) }
    }

    /// The team id of each hit's conversation (`workspace_id` in `--json`), by the conversation's Slack id; a
    /// conversation the archive lacks (a remote's) or of no known workspace has none.
    ///
    /// - Complexity: one lookup per conversation among the hits.
    static func workspaceIDs(of hits: [SearchHit], in archive: Archive) throws -> [String: String] {
        var out: [String: String] = [:]
        for id in Set(hits.map(\.message.conversationID)) {
            let team = try archive.store.conversations(matching: id).first { $0.id == id }?.workspaceID
            if let team { out[id] = team }
        }
        return out
    }

    /// Where the text output stops counting for its "N of M shown" line.
    static let countCap = 1_000

    /// What a search found, local or merged with a remote's.
    struct Found {
        var hits: [SearchHit]
        /// Matches counted (text output only, capped at `countCap`); nil when not counted.
        var total: Int?
        /// Whether the remote answered only in part (nil: no remote).
        var partial: Bool?
        var saveFailed = false
        var suggestions: [WordSuggestion] = []
    }

    /// The archive's search, with `--fix` searching the likeliest correction instead; notes on stderr.
    private func localSearch(engine: SearchEngine, parsed: SearchQuery, text: String, options: SearchOptions) throws
        -> Found
    {
        var results = try engine.search(parsed, text: text, options: options)
        if fix, !results.suggestions.isEmpty {
            let corrected = engine.corrected(parsed, with: results.suggestions)
            Output.error("Searched for '\(corrected.slackSyntax)' instead (--fix).")
            results = try engine.search(corrected, text: corrected.slackSyntax, options: options)
        }
        for note in results.notes { Output.error("note: \(note)") }
        return Found(hits: results.hits, total: results.total, suggestions: results.suggestions)
    }

    /// The archive's search merged with the remote's within `--deadline`; notes, the remote's problem and what was
    /// saved on stderr.
    private func remoteSearch(
        _ remoteURL: String, engine: SearchEngine, parsed: SearchQuery, text: String, options: SearchOptions,
        saveRefused: String?
    ) async throws -> Found {
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
        return Found(
            hits: results.hits, partial: results.partial,
            saveFailed: saveRefused != nil || results.saveProblem != nil)
    }
}

extension SearchSort: ExpressibleByArgument {}

/// The last line of `search --json` when a word matched (almost) nothing: the corrections and the corrected query.
struct SuggestionsJSON: Encodable {
    var suggestions: [WordSuggestion]
    /// The query with each word replaced by its best correction (what `--fix` searches).
    var query: String
}
