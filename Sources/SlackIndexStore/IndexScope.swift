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
    /// The index's column, and the message table's generated column it reads (the same text).
    static let column = "search_scope"

    /// The scope text of a message whose conversation row id and author id are the SQL expressions given: the
    /// generated column's definition (`conversation_id`, `user_id`) and what the writers bind (parameters), one
    /// text for both, so that the index always holds what `check` reads back from the column.
    /// An author id that is not one token (`isToken`) is left out, so that the text stays a scope text.
    static func expression(conversation: String, user: String) -> String {
        """
        char(3) || 'c' || \(conversation) || CASE WHEN \(user) IS NULL OR \(user) = '' \
        OR length(CAST(\(user) AS BLOB)) > 62 OR \(user) GLOB '*[^!-~]*' OR instr(\(user), '"') > 0 \
        THEN '' ELSE ' ' || char(3) || 'u' || \(user) END
        """
    }

    /// The generated column's definition.
    static let definition = expression(conversation: "conversation_id", user: "user_id")

    /// The values a writer gives the index for a message: its row id, texts, then its conversation and author,
    /// bound as parameters 1 to 5 (`MessageWriter`).
    static let insertValues = "?1, ?2, ?3, " + expression(conversation: "?4", user: "?5")

    /// The most conversations or authors a search names through the scope (`in:#a in:#b`); more are left to the
    /// row filter alone, as before v22.
    static let maxTerms = 64

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

    /// `positive` (a search's MATCH, exclusions inside) that also matches `scope`, and its rank spec `spec` with an
    /// `x` entry per scope phrase: they score nothing, and their documents (a whole channel's) are not counted.
    static func restrict(_ positive: String, spec: String, to scope: (expression: String, phrases: Int))
        -> (match: String, spec: String)
    {
        let entries = Array(repeating: "\(scopeGroup)x", count: scope.phrases).joined(separator: " ")
        return ("(\(positive)) AND \(scope.expression)", spec.isEmpty || spec == "!" ? spec + entries : spec + " " + entries)
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
