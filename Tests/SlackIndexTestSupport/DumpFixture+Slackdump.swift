import Foundation
import GRDB

/// The fixture as slackdump writes it: `slackdump archive`'s `slackdump.sqlite` and the older `dump` format.
extension DumpFixture {
    /// slackdump's tables, from `scripts/slackdump-schema.sql` (see there which migrations).
    static let slackdumpSchema: String = {
        let file = TestSupport.root.appendingPathComponent("scripts/slackdump-schema.sql")
        return (try? String(contentsOf: file, encoding: .utf8)) ?? "missing scripts/slackdump-schema.sql"
    }()

    static func tsInteger(_ ts: String) -> Int64 {
        let parts = ts.split(separator: ".")
        return Int64(parts[0])! * 1_000_000 + Int64(parts[1])!
    }

    func slackdump(_ layout: String, in root: URL) throws -> URL {
        switch layout {
        case "slackdump": return try slackdumpArchive(in: root)
        case "slackdump-file": return try slackdumpArchive(in: root).appendingPathComponent("slackdump.sqlite")
        case "slackdump-dump": return try slackdumpDump(in: root)
        default: throw CocoaError(.featureUnsupported)
        }
    }

    /// `slackdump archive`'s folder: users, channels, one history chunk per conversation and one per thread, and a
    /// second run that saved #general's first message again with another text, in an earlier and a later chunk
    /// (the later one wins; the fixture's text is the later one).
    func slackdumpArchive(in root: URL) throws -> URL {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: root.appendingPathComponent("slackdump.sqlite").path)
        try queue.write { db in
            try db.execute(sql: Self.slackdumpSchema)
            try db.execute(sql: "INSERT INTO SESSION (ID, MODE) VALUES (1, 'archive')")
            var chunk: Int64 = 0
            func newChunk(_ type: Int) throws -> Int64 {
                chunk += 1
                try db.execute(
                    sql: "INSERT INTO CHUNK (ID, UNIX_TS, SESSION_ID, TYPE_ID, FINAL) VALUES (?, ?, 1, ?, 1)",
                    arguments: [chunk, 1_700_100_000_000 + chunk, type])
                return chunk
            }
            func insert(_ message: Message, type: Int, index: Int, text: String? = nil) throws -> Int64 {
                var object = json(message)
                if let text { object["text"] = text }
                let id = try newChunk(type)
                try db.execute(
                    sql: """
                        INSERT INTO MESSAGE (ID, CHUNK_ID, CHANNEL_ID, TS, PARENT_ID, THREAD_TS, IS_PARENT, IDX, TXT, DATA)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        Self.tsInteger(message.ts), id, message.channel, message.ts,
                        message.threadTS.map(Self.tsInteger), message.threadTS, message.threadTS == message.ts, index,
                        object["text"] as? String, Data(Self.text(object).utf8),
                    ])
                return id
            }
            let users = try newChunk(3)
            for (index, user) in Self.users.enumerated() {
                let data = Self.text(["id": user.id, "name": user.name, "real_name": user.realName])
                try db.execute(
                    sql: "INSERT INTO S_USER (ID, CHUNK_ID, IDX, USERNAME, DISPLAY_NAME, DATA) VALUES (?, ?, ?, ?, '', ?)",
                    arguments: [user.id, users, index, user.name, Data(data.utf8)])
            }
            let channels = try newChunk(4)
            for (index, conversation) in Self.conversations.enumerated() {
                try db.execute(
                    sql: "INSERT INTO CHANNEL (ID, CHUNK_ID, NAME, IDX, DATA) VALUES (?, ?, ?, ?, ?)",
                    arguments: [
                        conversation.id, channels, conversation.name, index,
                        Data(Self.text(Self.conversationObject(conversation)).utf8),
                    ])
            }
            // The first run saw #general's first message before its edit.
            let first = messages[0]
            _ = try insert(first, type: 0, index: 0, text: "an older text of the first message")
            for conversation in Self.conversations {
                for (index, message) in topLevel(conversation.id).enumerated() where message.ts != first.ts {
                    _ = try insert(message, type: 0, index: index)
                }
            }
            for parent in threadParents {
                for (index, message) in ([parent] + replies(of: parent)).enumerated() {
                    _ = try insert(message, type: 1, index: index)
                }
            }
            _ = try insert(first, type: 0, index: 0)  // the second run, later: its text wins
        }
        try queue.close()
        return root
    }

    /// slackdump's older `dump` format: one `<channel id>.json` per conversation, replies inside their parents
    /// (`slackdump_thread_replies`), and the users as a bare array.
    func slackdumpDump(in root: URL) throws -> URL {
        var files: [String: String] = [:]
        for conversation in Self.conversations {
            let messages = topLevel(conversation.id).map { message -> [String: Any] in
                var object = json(message)
                let replies = self.replies(of: message)
                if !replies.isEmpty { object["slackdump_thread_replies"] = replies.map { json($0) } }
                return object
            }
            files["\(conversation.id).json"] = Self.text(
                ["channel_id": conversation.id, "name": conversation.name, "messages": messages])
        }
        files["users-T0WORKSPACE.json"] = Self.text(
            Self.users.map { ["id": $0.id, "name": $0.name, "real_name": $0.realName] })
        files["channels-T0WORKSPACE.json"] = Self.text(Self.conversations.map(Self.conversationObject))
        return try TestSupport.writeExport(files, in: root)
    }
}
