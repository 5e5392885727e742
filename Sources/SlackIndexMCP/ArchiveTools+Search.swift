import Foundation
import SlackIndex

extension ArchiveTools {
    /// Matches counted at most past a page to say how many more there are (as `slackindex search` does): a
    /// common word costs milliseconds, not a count of the whole index.
    static let moreCountCap = 1_000

    /// `search`: Slack's query syntax over the conversations the viewer sees, a page of hits with each hit's
    /// handle, conversation, author, date, permalink and snippet, then how many more and the cursor for them.
    ///
    /// - Throws: `ToolError` for a query with nothing in it, a date it cannot read, a name that matches no one,
    ///   or a cursor of another query.
    /// - Complexity: that of `SearchEngine.search` for offset + limit hits, plus a count capped at
    ///   `moreCountCap` past them when the page is full.
    func search(_ arguments: ToolArguments, token: APIToken) throws -> String {
        let zone = try timeZone(token)
        var options = SearchOptions()
        options.timeZone = zone
        options.now = now()
        options.me = token.userID
        options.suggest = true
        options.allowedConversations = try archive.visibleConversationRowIDs(to: token)
        options.wordVariants = try !arguments.bool("exact", default: false)
        let sort = try arguments.choice("sort", SearchSort.allCases.map(\.rawValue), default: "relevance")
        options.sort = SearchSort(rawValue: sort) ?? .relevance
        let text = try arguments.string("query") ?? ""
        let filters = try searchFilters(arguments, today: Day.today(in: zone, now: options.now))
        guard !text.isEmpty || !filters.isEmpty else {
            throw ToolError.missing(argument: "query", example: "\"deploy in:#ops after:2024-05-01\"")
        }
        var fingerprint = StableHash()
        for part in [text, sort, String(options.wordVariants)] + filters.map({ "\($0.name):\($0.value)" }) {
            fingerprint.combine(part)
        }
        let limit = try arguments.limit(.search)
        options.offset = try SearchCursor.offset(arguments.string("cursor"), query: fingerprint.signed)
        options.limit = limit
        options.candidateWindow = max(options.candidateWindow, options.offset + limit + 1)
        let parsed = engine.parse(text, filters: filters, options: options)
        if let unread = parsed.unreadDates.first { throw ToolError.badDate(argument: "query", value: unread) }
        // The count comes from the prepared search (capped: "N or more" past it).
        options.countCap = options.offset + ArchiveTools.moreCountCap
        let results = try searched { try engine.search(parsed, text: text, options: options) }
        var total = options.offset + results.hits.count
        if results.hits.count == limit, let counted = results.total { total = counted }
        var lines = try hitLines(results.hits, format: try arguments.format(), zone: zone)
        lines.insert(summary(of: results, text: text, offset: options.offset, total: total), at: 0)
        lines += results.notes.map { "Note: \($0)" }
        if !results.suggestions.isEmpty {
            lines.append("Did you mean: \(engine.corrected(parsed, with: results.suggestions).slackSyntax)")
        }
        let shown = options.offset + results.hits.count
        if total > shown {
            let capped = total >= options.offset + ArchiveTools.moreCountCap
            let more = capped ? "\(total - shown) or more" : "\(total - shown)"
            let next = SearchCursor.make(offset: shown, query: fingerprint.signed)
            lines.append("\(more) more; ask with cursor \"\(next)\" (and the same query and filters).")
        }
        return lines.joined(separator: "\n")
    }

    /// The `in`, `from`, `after` and `before` arguments as filters (dates checked).
    private func searchFilters(_ arguments: ToolArguments, today: Day) throws -> [(name: String, value: String)] {
        var filters: [(name: String, value: String)] = []
        if let value = try arguments.string("in") { filters.append(("in", value)) }
        if let value = try arguments.string("from") { filters.append(("from", value)) }
        if let value = try arguments.date("after", today: today) { filters.append(("after", value)) }
        if let value = try arguments.date("before", today: today) { filters.append(("before", value)) }
        return filters
    }

    /// The first line: what was found and which part is shown.
    private func summary(of results: SearchResults, text: String, offset: Int, total: Int) -> String {
        guard !results.hits.isEmpty else { return "No messages match '\(text)'." }
        let count = total >= offset + ArchiveTools.moreCountCap ? "\(total) or more" : "\(total)"
        let noun = count == "1" ? "message matches" : "messages match"
        return "\(count) \(noun) '\(text)'; hits \(offset + 1)–\(offset + results.hits.count):"
    }

    /// Runs a search step with the engine's name errors turned into the viewer's: an unknown or ambiguous
    /// conversation is told with the names the viewer may see only.
    private func searched<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch SearchError.nothingToSearch(_) {
            throw ToolError.noQuery
        } catch SearchError.unknownConversation(let name, _), SearchError.ambiguousConversation(let name, _) {
            _ = try conversation(name, token: try viewerToken())
            // Visible and unique to the viewer, but not to the engine (which sees every conversation).
            throw ToolError.ambiguousConversation(name, candidates: ["its id, from the conversations tool"])
        } catch let error as SearchError {
            // Users are not private (`users.list` shows everyone): the engine's message stands.
            throw ToolError.search(error.description)
        }
    }

    /// Each hit: a numbered header, the handle, the permalink and the snippet (or the whole message).
    private func hitLines(_ hits: [SearchHit], format: MessageFormat, zone: TimeZone) throws -> [String] {
        let users = try archive.archivedUsers(ids: Set(hits.compactMap(\.message.userID)))
        let whole = try messageText(hits.map(\.message), format: format, zone: zone)
        return hits.enumerated().flatMap { index, hit -> [String] in
            let m = hit.message
            let handle = m.userID.flatMap { users[$0] }.map { " (@\($0.user.handle))" } ?? ""
            var lines = [
                "",
                "\(index + 1). \(m.conversation)  \(m.user ?? m.userID ?? "unknown")\(handle)  "
                    + Day.localMinute(m.seconds, in: zone)
                    + (m.threadTS != nil && m.threadTS != m.ts ? "  (reply in a thread)" : ""),
                "   handle: \(m.handle)",
            ]
            if let link = hit.permalink { lines.append("   permalink: \(link)") }
            let snippet = MessageRenderer.oneLine(hit.snippet, width: 400)
                .replacingOccurrences(of: Highlight.start, with: "**")
                .replacingOccurrences(of: Highlight.end, with: "**")
            lines.append("   " + snippet)
            if format == .full { lines += whole.lines(m).dropFirst().map { " " + $0 } }
            return lines
        }
    }
}

/// A search answer's cursor: where the next hits start, tied to the query it continues (`s1 OFFSET HASH`).
enum SearchCursor {
    static func make(offset: Int, query: Int64) -> String { OpaqueCursor.make(["s1", String(offset), String(query)]) }

    /// The offset a cursor continues from; 0 without one.
    ///
    /// - Throws: `ToolError.badCursor` for text `make` did not write; `.cursorElsewhere` for another query's.
    static func offset(_ text: String?, query: Int64) throws -> Int {
        guard let text else { return 0 }
        let parts = try OpaqueCursor.parts(text, kind: "s1")
        guard parts.count == 2, let offset = Int(parts[0]), (1...10_000).contains(offset), let hash = Int64(parts[1])
        else { throw ToolError.badCursor(argument: "cursor") }
        guard hash == query else { throw ToolError.cursorElsewhere("another search") }
        return offset
    }
}
