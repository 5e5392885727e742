import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexServer
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Issue 47's "must show": every import source, at a size that crosses many transactions, gives back through
/// `serve`'s `conversations.history` and `conversations.replies` the messages it was given, and `check` finds the
/// archive healthy. Before the fix, every message a dump import wrote after its first transaction could point into
/// another page's packed block (D1): the rows compared equal, what `serve` gave back did not.
@Suite struct IntegrityRoundTripTests {
    /// 400 top-level messages in each of three conversations and the fixture's threads: 1,203 messages.
    static let fixture = DumpFixture(perConversation: 400)

    static let layouts = [
        "export", "export-zip", "tree", "api-script", "mixed", "lines", "lines-as-json", "slackdump", "slackdump-file",
        "slackdump-dump",
    ]

    static func write(_ layout: String) throws -> String {
        let root = TestSupport.temporaryDirectory().appendingPathComponent(layout)
        switch layout {
        case "export": return try fixture.export(in: root).path
        case "export-zip": return try zip(fixture.export(in: root), to: root.appendingPathExtension("zip")).path
        case "tree": return try fixture.tree(in: root).path
        case "api-script": return try fixture.apiScript(in: root).path
        case "mixed": return try fixture.mixedFolder(in: root).path
        case "lines": return try fixture.jsonLines(at: root.appendingPathComponent("dump.jsonl")).path
        case "lines-as-json": return try fixture.jsonLines(at: root.appendingPathComponent("dump.json")).path
        default: return try fixture.slackdump(layout, in: root).path
        }
    }

    /// The folder's files as a stored zip.
    static func zip(_ folder: URL, to file: URL) throws -> URL {
        var writer = ZipWriter()
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        for relative in files.sorted() {
            var isDirectory: ObjCBool = false
            let path = folder.appendingPathComponent(relative).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            writer.add(relative, try String(contentsOfFile: path, encoding: .utf8))
        }
        try writer.data().write(to: file)
        return file
    }

    @Test(arguments: layouts)
    func everySourceGivesBackWhatItWasGiven(layout: String) async throws {
        let archive = try TestSupport.makeArchive()
        // Transactions of 100 messages (the default is 20,000): the import's pages are split across a dozen of them.
        let summary = Importer(archive: archive, batchSize: 40, commitMessages: 100).importPaths([try Self.write(layout)])
        #expect(!summary.hasSkips, "\(summary.skippedFiles) \(summary.skipReasons)")
        #expect(summary.messagesAdded == Self.fixture.messages.count, "\(summary)")
        try await Self.expectGivesBack(Self.fixture, from: archive)
        let report = try ArchiveChecker(archive: archive).run()
        #expect(report.healthy, "\(report.findings)")
        #expect(report.messages == Self.fixture.messages.count)
    }

    /// Sync pages (history, replies and event pages of sample-data) in transactions of 50 messages: `check` finds
    /// the archive healthy, and every message `serve` gives back is valid JSON of the message asked for.
    @Test func syncPagesGiveBackWhatTheyHold() async throws {
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive, batchSize: 40, commitMessages: 50).importPaths([TestSupport.samplePages])
        #expect(summary.messagesAdded > 800, "\(summary)")
        let report = try ArchiveChecker(archive: archive).run()
        #expect(report.healthy, "\(report.findings)")
        let api = SlackAPI(archive: archive, configuration: Self.configuration)
        let user = try #require(try Self.firstUser(archive))
        let admin = try archive.createToken(userID: user, isAdmin: true, label: "tests").token
        var given = 0
        for id in try Self.conversationIDs(archive) {
            for message in try await Self.history(api, admin, id) {
                #expect(message["ts"] is String && message["type"] as? String == "message", "\(message)")
                given += 1
            }
        }
        #expect(given > 0)
    }

    /// A full disk during a dump import (SQLite's size cap fails writes as a full disk does) stops it with the
    /// documented message and true counts, keeps what was committed, and the same import run again completes it
    /// (issue 47's D6: a raw SQLite error, `messages_added: 0` while thousands were committed).
    @Test(arguments: ["tree", "lines", "slackdump"])
    func aFullDiskStopsADumpImportWithWhatWasCommitted(layout: String) async throws {
        let path = try Self.write(layout)
        // Room for about half of what the whole import writes (measured on a scratch archive first).
        let scratch = try TestSupport.makeArchive()
        let empty = try scratch.store.pageCount()
        _ = Importer(archive: scratch, batchSize: 40, commitMessages: 100).importPaths([path])
        let full = try scratch.store.pageCount()
        let archive = try TestSupport.makeArchive()
        try archive.store.limitSizeForTesting(pages: empty + (full - empty) / 2)
        let importer = Importer(archive: archive, batchSize: 40, commitMessages: 100)
        let summary = importer.importPaths([path])
        let stopped = try #require(summary.stopped, "\(summary)")
        #expect(stopped.contains("the disk holding the archive \(archive.path) is full"), "\(stopped)")
        #expect(stopped.contains("stay in the archive"), "\(stopped)")
        #expect(summary.skippedFiles.isEmpty, "\(summary.skippedFiles)")
        let stored = try archive.stats().messages
        #expect(summary.messagesAdded == stored, "\(summary)")
        #expect(stored < Self.fixture.messages.count)
        let afterStop = try ArchiveChecker(archive: archive).run()
        #expect(afterStop.healthy, "\(afterStop.findings.map { "\($0.area) \($0.count) \($0.examples.prefix(3))" })")
        try archive.store.limitSizeForTesting(pages: nil)
        let again = importer.importPaths([path])
        #expect(again.stopped == nil, "\(again)")
        #expect(again.messagesAdded == Self.fixture.messages.count - stored, "\(again)")
        try await Self.expectGivesBack(Self.fixture, from: archive)
        let resumed = try ArchiveChecker(archive: archive).run()
        #expect(resumed.healthy, "\(resumed.findings.map { "\($0.area) \($0.count) \($0.examples.prefix(3))" })")
    }

    /// Remote hits saved (`search --save-remote`): 300 of them over three conversations the archive lacks, stored
    /// and given back through `serve` with their ts, author and text, and `check` healthy.
    @Test func savedRemoteHitsGiveBackWhatTheRemoteSent() async throws {
        let archive = try TestSupport.makeArchive()
        let hits = (0..<300).map { index in
            RemoteHit(
                conversationID: "C0REMOTE0\(index % 3)", conversationName: "remote-\(index % 3)",
                ts: "\(1_700_000_000 + index * 60).000200", userID: "U0REMOTE\(index % 7)", username: "user\(index % 7)",
                text: "remote hit \(index) with \"quotes\", <@U0REMOTE1> and ✓", snippet: "remote hit \(index)")
        }
        let saved = try Importer(archive: archive).storeRemoteHits(hits)
        #expect(saved == 300)
        let report = try ArchiveChecker(archive: archive).run()
        #expect(report.healthy && report.messages == 300, "\(report.findings)")
        let api = SlackAPI(archive: archive, configuration: Self.configuration)
        let admin = try archive.createToken(userID: "U0REMOTE1", isAdmin: true, label: "tests").token
        var given: [String: [String: Any]] = [:]
        for channel in ["C0REMOTE00", "C0REMOTE01", "C0REMOTE02"] {
            for message in try await Self.history(api, admin, channel) { given[message["ts"] as? String ?? ""] = message }
        }
        #expect(given.count == 300)
        for hit in hits {
            let message = try #require(given[hit.ts], "\(hit.ts) not given back")
            #expect(message["text"] as? String == hit.text && message["user"] as? String == hit.userID)
        }
    }

    // MARK: What serve gives back

    /// Walks every conversation's history and every thread through the API and compares each message with the
    /// fixture's JSON for it (the fields the source wrote; `channel` and an export's `replies` list aside).
    static func expectGivesBack(_ fixture: DumpFixture, from archive: Archive) async throws {
        let api = SlackAPI(archive: archive, configuration: Self.configuration)
        let admin = try archive.createToken(userID: DumpFixture.users[0].id, isAdmin: true, label: "tests").token
        var expected: [String: [String: Any]] = [:]
        for message in fixture.messages { expected["\(message.channel)/\(message.ts)"] = fixture.json(message) }
        var seen = Set<String>()
        func compare(_ object: [String: Any], in channel: String) {
            guard let ts = object["ts"] as? String, let want = expected["\(channel)/\(ts)"] else {
                Issue.record("\(channel): a message the source did not hold: \(object)")
                return
            }
            seen.insert("\(channel)/\(ts)")
            for key in ["type", "user", "text", "ts", "thread_ts", "parent_user_id"] {
                #expect(object[key] as? String == want[key] as? String, "\(channel)/\(ts) \(key): \(object)")
            }
        }
        for conversation in DumpFixture.conversations {
            for message in try await history(api, admin, conversation.id) { compare(message, in: conversation.id) }
        }
        for parent in fixture.threadParents {
            let pages = try await pages(
                api, admin, "conversations.replies", ["channel": parent.channel, "ts": parent.ts, "limit": "50"])
            for message in pages { compare(message, in: parent.channel) }
        }
        #expect(seen.count == expected.count, "given back \(seen.count) of \(expected.count)")
    }

    /// No rate limit to speak of: the walks make hundreds of calls at once.
    static let configuration = SlackAPIConfiguration(rateLimit: RateLimit(requests: 1_000_000, interval: .seconds(1)))

    static func history(_ api: SlackAPI, _ token: String, _ channel: String) async throws -> [[String: Any]] {
        try await pages(api, token, "conversations.history", ["channel": channel, "limit": "150"])
    }

    /// Every message of every page, following cursors; each page must be valid JSON with `"ok": true`.
    static func pages(_ api: SlackAPI, _ token: String, _ method: String, _ parameters: [String: String])
        async throws -> [[String: Any]]
    {
        var out: [[String: Any]] = []
        var cursor: String?
        var calls = 0
        repeat {
            var arguments = parameters
            if let cursor { arguments["cursor"] = cursor }
            let response = await api.call(method, parameters: arguments, bearer: token)
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any],
                "\(method) \(arguments): not JSON")
            try #require(body["ok"] as? Bool == true, "\(method) \(arguments): \(body["error"] ?? body)")
            out += body["messages"] as? [[String: Any]] ?? []
            let next = (body["response_metadata"] as? [String: Any])?["next_cursor"] as? String ?? ""
            cursor = next.isEmpty ? nil : next
            calls += 1
            try #require(calls < 1_000, "no end to the pages")
        } while cursor != nil
        return out
    }

    static func firstUser(_ archive: Archive) throws -> String? {
        try archive.pool.read { db in try String.fetchOne(db, sql: "SELECT min(id) FROM user") }
    }

    static func conversationIDs(_ archive: Archive) throws -> [String] {
        try archive.pool.read { db in try String.fetchAll(db, sql: "SELECT slack_id FROM conversation ORDER BY id") }
    }
}
