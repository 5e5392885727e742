import GRDB

/// A message's conversation and author as words of the search index's third column, `search_scope` (migration v22):
/// `"\u{3}c31 \u{3}uU0XRBUTTPAY"`, kept verbatim by the tokenizer (`SLACKINDEX_SCOPE_MARKER` in
/// `Sources/CSlackTokenizer/include/slack_tokenizer.h`). A search with `in:` or `from:` matches them with its words,
/// so FTS5 walks only the conversation's or author's matches. Before, the message row of every match was read to
/// learn its conversation: `in:#team-infra swaps` on the generated 10M archive read 9,400 rows (16 KiB pages past
/// the 2 GiB SQLite maps) for its 500-candidate window, 57 ms against 5–8 ms with the scope words (measured on a
/// prototype index in the sqlite3 shell). The filters on the message rows stay, now over the scope's matches only.
/// `slackindex_rank` ranks only the two text columns, so no score changes.
enum IndexScope {
    /// The index's column, and the column of `contentView` that holds its text.
    static let column = "search_scope"

    /// The index's content table since v22: `message`'s id, its texts as indexed and its scope text (FTS5 reads it
    /// only when asked for a column's text, which no search does; `check` reads the scope text through `definition`).
    static let contentView = "message_search"

    /// The scope text of a row of `message` as SQL: `U+0003 c<conversation_id>`, then ` U+0003 u<user_id>` when the
    /// author id is one token (`isToken`), so that the text stays a scope text. (GLOB stops at a NUL: an id holding
    /// one is caught by `length`, which counts characters up to it.) Whole rebuilds, `check` and
    /// `contentView` read it.
    ///
    /// The writers make the same text in Swift (`withText`): the import's 50,000 messages evaluated through this
    /// expression cost 1.0 G more instructions on the writer thread (+32%: SQLite's string concatenations, each a
    /// malloc, and the GLOB), bytes written into a buffer a fraction of that. `check` compares the index with this
    /// expression, and `IndexScopeTests` the two texts for edge ids.
    static let definition = """
        char(3) || 'c' || conversation_id || CASE WHEN user_id IS NULL OR user_id = '' \
        OR length(CAST(user_id AS BLOB)) > 62 OR length(user_id) != length(CAST(user_id AS BLOB)) \
        OR user_id GLOB '*[^!-~]*' OR instr(user_id, '"') > 0 \
        THEN '' ELSE ' ' || char(3) || 'u' || user_id END
        """

    /// Calls `body` with the scope text of a message (`definition`'s text, as UTF-8), made without allocating.
    static func withText<R>(conversation: Int64, user: String?, _ body: (UnsafeBufferPointer<UInt8>) throws -> R)
        rethrows -> R
    {
        // 2 + 20 digits + 3 + 62: the longest text.
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 96) { buffer in
            buffer[0] = 3
            buffer[1] = UInt8(ascii: "c")
            var count = 2
            for byte in String(conversation).utf8 {
                buffer[count] = byte
                count += 1
            }
            if let user, isToken(user) {
                buffer[count] = UInt8(ascii: " ")
                buffer[count + 1] = 3
                buffer[count + 2] = UInt8(ascii: "u")
                count += 3
                for byte in user.utf8 {
                    buffer[count] = byte
                    count += 1
                }
            }
            return try body(UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// `withText` as a string.
    static func text(conversation: Int64, user: String?) -> String {
        withText(conversation: conversation, user: user) { String(decoding: $0, as: UTF8.self) }
    }

    /// The most conversations or authors a search names through the scope (`in:#a in:#b`); more are left to the
    /// row filter alone, as before v22. FTS5 seeks every one of the OR's doclists at each match of the words: on the
    /// generated 1M archive (6 words, `bench search --queries`, medians of 5) one conversation took `in:` p50 2.24 →
    /// 1.45 ms and p99 8.6 → 2.8–4.0 ms, two p99 6.5–7.4 → 4.2–4.4 ms at the same p50, but four took rare words
    /// 1.8 → 3.7 ms, sixteen 3.4 → 6.9 ms, 64 10.7 → 16 ms (an API token's visible conversations come here too).
    static let maxTerms = 2

    /// The FTS5 expression every hit of `search` matches in the scope column, and its number of phrases; nil when
    /// the search names no conversation or author the scope can hold.
    static func match(_ search: ResolvedSearch) -> (expression: String, phrases: Int)? {
        var groups: [[String]] = []
        if let ids = search.inConversations, !ids.isEmpty, ids.count <= maxTerms {
            groups.append(ids.map { "\"\u{3}c\($0)\"" })
        }
        if let users = search.fromUsers, !users.isEmpty, users.count <= maxTerms, users.allSatisfy(isToken) {
            groups.append(users.map { "\"\u{3}u\($0)\"" })
        }
        guard !groups.isEmpty else { return nil }
        let expression = groups.map { "\(column) : (" + $0.joined(separator: " OR ") + ")" }.joined(separator: " AND ")
        return (expression, groups.reduce(0) { $0 + $1.count })
    }

    /// A search's MATCH (exclusions inside) that also matches `scope`, and its rank spec with an `x` entry per scope
    /// phrase: they score nothing, and their documents (a whole channel's) are not counted.
    static func restrict(_ search: (match: String, rankSpec: String), to scope: (expression: String, phrases: Int))
        -> (match: String, rankSpec: String)
    {
        let entries = Array(repeating: "\(scopeGroup)x", count: scope.phrases).joined(separator: " ")
        let spec = search.rankSpec
        return (
            "(\(search.match)) AND \(scope.expression)",
            spec.isEmpty || spec == "!" ? spec + entries : spec + " " + entries
        )
    }

    /// The rank spec's group of the scope phrases: one no word takes (`slack_rank.c` reads up to 999,999).
    private static let scopeGroup = 999_999

    /// Whether a user id is one scope token: 1…62 bytes of printable ASCII other than `"` (the tokenizer's rule, and
    /// `expression`'s; Slack's ids are `U0XRBUTTPAY`). An id that is not is searched by the row filter alone.
    static func isToken(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...62).contains(bytes.count) && bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") }
    }

    /// Whether the archive's index has the scope column (v22; an archive opened read-only may not).
    static func indexed(_ db: Database) throws -> Bool {
        try db.columns(in: "message_fts").contains { $0.name == column }
    }
}
