import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// The index's scope column (`IndexScope`, migration v22): `in:` and `from:` matched inside the index find exactly
/// the messages the rows say, rank them exactly as before, and an archive indexed before the column reads alike.
@Suite struct IndexScopeTests {
    /// Words of every kind a search holds: common and rare words, variants, a prefix, a phrase with "the", an
    /// exclusion (which compiles into the MATCH ahead of the scope), two words.
    static let words = ["the", "data", "deploy", "dep*", "\"of the\"", "the -and", "error python", "iterators"]

    /// The sample archive with texts at the scope's edges: a text that starts with U+0003 and a letter, a control
    /// character in a word, an author whose id the scope cannot hold (a space, a quote, non-ASCII, 70 bytes).
    static func archive() throws -> Archive {
        let odd = [
            "U 1", "U\"q", "Uü", String(repeating: "U", count: 70), "U\\u0000X", "U\\u007FX", "",
            String(repeating: "V", count: 62), String(repeating: "W", count: 63),
        ]
        let texts = [
            (#"\u0003cabc zebraword one"#, "U1"), (#"zebra\u0003cword two"#, "U1"),
            (#"\u0003c1"#, "U1"), ("zebraword odd one", odd[0]), ("zebraword odd two", odd[1]),
            ("zebraword odd three", odd[2]), ("zebraword odd four", odd[3]), ("zebraword odd five", odd[4]),
            ("zebraword odd six", odd[5]), ("zebraword odd seven", odd[6]), ("zebraword odd eight", odd[7]),
            ("zebraword odd nine", odd[8]),
        ]
        let messages = texts.enumerated().map { index, entry in
            let user = entry.1.replacingOccurrences(of: "\"", with: "\\\"")
            return #"{"type":"message","user":"\#(user)","text":"\#(entry.0)","ts":"\#(1_700_000_000 + index).000100"}"#
        }
        let edges = try TestSupport.minimalExport(days: ["2023-11-14": "[" + messages.joined(separator: ",") + "]"])
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: edges.path)
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        return archive
    }

    /// The ids a search finds, newest first, all of them.
    static func ids(_ query: String, _ archive: Archive) throws -> [Int64] {
        var options = SearchOptions()
        options.sort = .newest
        options.limit = 100_000
        options.wordVariants = true
        return try SearchEngine(archive: archive).search(query, options: options).hits.map(\.message.rowID)
    }

    /// `in:` and `from:` (one or two of each, with every kind of word) find exactly the matches of the words alone
    /// whose row has the conversation and author: the rows are the oracle.
    @Test func inAndFromFindWhatTheRowsSay() throws {
        let archive = try Self.archive()
        let rows = try archive.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, conversation_id, user_id FROM message WHERE is_deleted = 0")
        }
        let conversationOf = Dictionary(uniqueKeysWithValues: rows.map { ($0["id"] as Int64, $0["conversation_id"] as Int64) })
        let userOf = Dictionary(uniqueKeysWithValues: rows.map { ($0["id"] as Int64, $0["user_id"] as String?) })
        let conversations = try archive.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, slack_id FROM conversation ORDER BY id").map {
                (id: $0["id"] as Int64, slackID: $0["slack_id"] as String)
            }
        }
        let users = try archive.pool.read { db in
            try String.fetchAll(
                db, sql: "SELECT user_id FROM message WHERE user_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 6")
        }
        #expect(conversations.count >= 5 && users.count == 6)
        var checked = 0
        for words in Self.words + ["zebraword", "cabc", "zebra"] {
            let all = try Self.ids(words, archive)
            for (index, conversation) in conversations.enumerated() {
                let other = conversations[(index + 1) % conversations.count]
                let expected = all.filter { conversationOf[$0] == conversation.id }
                #expect(try Self.ids("\(words) in:\(conversation.slackID)", archive) == expected, "\(words) \(conversation)")
                let either = all.filter { [conversation.id, other.id].contains(conversationOf[$0]) }
                #expect(
                    try Self.ids("\(words) in:\(conversation.slackID) in:\(other.slackID)", archive) == either,
                    "\(words) in two")
                checked += expected.count
            }
            for (index, user) in users.enumerated() {
                let expected = all.filter { userOf[$0] == user }
                #expect(try Self.ids("\(words) from:\(user)", archive) == expected, "\(words) from \(user)")
                let conversation = conversations[index % conversations.count]
                #expect(
                    try Self.ids("\(words) from:\(user) in:\(conversation.slackID)", archive)
                        == expected.filter { conversationOf[$0] == conversation.id }, "\(words) both")
                checked += expected.count
            }
        }
        #expect(checked > 1_000, "the searches found too little to show anything")
        // Authors the scope cannot hold are found through their rows alone.
        for user in ["U 1", "Uü"] {
            #expect(try Self.ids("zebraword from:\"\(user)\"", archive).count == 1, "\(user)")
        }
        // A text that starts like a scope word is searched as words; one that is nothing else is the known limit.
        #expect(try Self.ids("zebraword cabc", archive).count == 1)
        #expect(try Self.ids("zebra in:C1", archive).count == 1)
    }

    /// The scope words in the index are each conversation's and each author's that fits a token, and none is
    /// counted as a word (`message_word`); the index's content view holds the text the writers make
    /// (`IndexScope.withText`), also for authors the scope cannot hold.
    @Test func scopeWordsAreConversationsAndAuthors() throws {
        let archive = try Self.archive()
        try archive.pool.read { db in
            try db.execute(
                sql: "CREATE VIRTUAL TABLE temp.scope_entries USING fts5vocab(main, message_fts, instance)")
            let scope = try String.fetchSet(
                db, sql: "SELECT DISTINCT term FROM temp.scope_entries WHERE col = '\(IndexScope.column)'")
            let conversations = try Int64.fetchAll(
                db, sql: "SELECT DISTINCT conversation_id FROM message WHERE is_deleted = 0")
            // Read as bytes: GRDB's strings stop at a NUL, which one author's id holds.
            func text(_ blob: Data?) -> String? { blob.map { String(decoding: $0, as: UTF8.self) } }
            let users = try Data.fetchAll(
                db,
                sql: "SELECT DISTINCT CAST(user_id AS BLOB) FROM message WHERE is_deleted = 0 AND user_id IS NOT NULL"
            ).compactMap(text)
            #expect(users.contains("U\u{0}X") && users.contains(String(repeating: "V", count: 62)))
            let expected = Set(conversations.map { "\u{3}c\($0)" } + users.filter(IndexScope.isToken).map { "\u{3}u\($0)" })
            #expect(scope == expected)
            #expect(users.count > users.filter(IndexScope.isToken).count, "no author the scope cannot hold")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM message_word WHERE word < char(4)") == 0)
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT m.conversation_id, CAST(m.user_id AS BLOB) AS user, CAST(s.search_scope AS BLOB) AS scope
                    FROM message m JOIN \(IndexScope.contentView) s ON s.id = m.id
                    """)
            for row in rows {
                let user = text(row["user"])
                let stored = text(row["scope"])
                let words = ["\u{3}c\(row["conversation_id"] as Int64)"]
                    + (user.map { IndexScope.isToken($0) ? ["\u{3}u\($0)"] : [] } ?? [])
                #expect(stored == words.joined(separator: " "))
                #expect(stored == IndexScope.text(conversation: row["conversation_id"], user: user))
            }
        }
        try IndexOracle.expectExact(archive)
        #expect(try archive.store.indexAgreement().agrees)
    }

    /// Relevance is unchanged by the scope (the rank leaves its column out), and an archive indexed before it (read
    /// only) answers the same; opened for writing, it is upgraded and still answers the same.
    @Test func anArchiveBeforeTheScopeAnswersAlikeThenUpgrades() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("scope.sqlite").path
        let users = ["U0UHUSTSVZ6", "U013FTYVLOQ"]
        let queries = Self.words.flatMap { words in
            ["\(words) in:#marketing", "\(words) from:\(users[0])", "\(words) from:\(users[1]) in:#ios", "\(words) in:#ios"]
        }
        do {
            let archive = try Archive(path: path)
            _ = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        }
        func answers(_ archive: Archive) throws -> [[String]] { try IndexMergeTests.answers(archive, queries) }
        // The index's own scores, which relevance blends with time (a change too small to reorder shows here).
        func scores(_ archive: Archive) throws -> [Int64: Double] {
            try archive.pool.read { db in
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT rowid, slackindex_rank(message_fts, '', 0.2, 1.0, 0.4) FROM message_fts
                        WHERE message_fts MATCH 'data OR deploy OR python OR "of the"'
                        """)
                return Dictionary(uniqueKeysWithValues: rows.map { ($0[0], $0[1]) })
            }
        }
        let expected = try answers(Archive(path: path))
        let expectedScores = try scores(Archive(path: path))
        #expect(expected.filter { $0.count >= 5 }.count >= 12)
        #expect(expectedScores.count > 100)
        try Archive(path: path).pool.write { try TestSupport.undoSearchScope($0) }
        let old = try Archive(path: path, access: .readOnly)
        #expect(try old.pool.read { try !IndexScope.indexed($0) })
        #expect(try answers(old) == expected)
        let oldScores = try scores(old)
        #expect(oldScores.keys == expectedScores.keys)
        #expect(oldScores.allSatisfy { id, score in abs(score - (expectedScores[id] ?? 0)) < 1e-9 * max(1, abs(score)) })
        #expect(try old.store.indexAgreement().agrees)
        let upgraded = try Archive(path: path)
        #expect(upgraded.store.upgradedOnOpen)
        #expect(try upgraded.pool.read { try IndexScope.indexed($0) })
        #expect(try answers(upgraded) == expected)
        try IndexOracle.expectExact(upgraded)
        #expect(try upgraded.store.wordCountMismatches(limit: 5).count == 0)
    }

    /// A message edited to another author moves to that author's scope: `from:` finds it under the new one only,
    /// and the index stays exact.
    @Test func anEditToAnotherAuthorMovesItsScope() throws {
        func export(user: String, edited: String?) throws -> URL {
            let edit = edited.map { #","edited":{"user":"\#(user)","ts":"\#($0)"}"# } ?? ""
            return try TestSupport.minimalExport(
                days: [
                    "2023-11-14":
                        #"[{"type":"message","user":"\#(user)","text":"quokka tale","ts":"1700000000.000100"\#(edit)}]"#
                ],
                extra: [
                    "users.json": #"[{"id": "U1", "name": "ann"}, {"id": "U2", "name": "bob"}]"#
                ])
        }
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: export(user: "U1", edited: nil).path)
        #expect(try Self.ids("quokka from:U1", archive).count == 1)
        let report = try Importer(archive: archive).importExport(at: export(user: "U2", edited: "1700000100.000000").path)
        #expect(report.messagesUpdated == 1)
        #expect(try Self.ids("quokka from:U1", archive).isEmpty)
        #expect(try Self.ids("quokka from:U2", archive).count == 1)
        #expect(try Self.ids("quokka in:C1 from:U2", archive).count == 1)
        try IndexOracle.expectExact(archive)
    }

    /// The scope's FTS5 expression: every conversation and author, in quotes, under the column; none past
    /// `maxTerms` or for an author that is not a token; and the rank spec gets an `x` entry per scope phrase.
    @Test func theScopeExpressionAndItsRankEntries() {
        var search = ResolvedSearch()
        #expect(IndexScope.match(search) == nil)
        search.inConversations = [3, 41]
        search.fromUsers = ["U1"]
        let scope = IndexScope.match(search)
        #expect(scope?.expression == "search_scope : (\"\u{3}c3\" OR \"\u{3}c41\") AND search_scope : (\"\u{3}uU1\")")
        #expect(scope?.phrases == 3)
        search.fromUsers = ["U1", "U 2"]
        #expect(IndexScope.match(search)?.phrases == 2)
        search.inConversations = Array(1...Int64(IndexScope.maxTerms + 1))
        #expect(IndexScope.match(search) == nil)
        let restricted = IndexScope.restrict(
            (match: "\"a\" NOT \"b\"", rankSpec: "!0e 1x"), to: ("search_scope : (\"\u{3}c1\")", 1))
        #expect(restricted.match == "(\"a\" NOT \"b\") AND search_scope : (\"\u{3}c1\")")
        #expect(restricted.rankSpec == "!0e 1x 999999x")
    }
}
