import Foundation
import GRDB

/// A slackdump archive's `slackdump.sqlite` (slackdump v3.1 and later, `slackdump archive`), read only.
///
/// The SQL here reads slackdump's database, never the archive's; it lives in the store module because that is
/// where GRDB is. Layout, from slackdump's migrations (`internal/chunk/backend/dbase/repository/migrations`):
/// every API answer slackdump saved is a `CHUNK` (`TYPE_ID` 0 history, 1 thread, 3 users, 4 channels,
/// 5 channel info, 6 workspace), and its records are rows of `MESSAGE`, `S_USER`, `CHANNEL` or `WORKSPACE` with
/// the Slack object's JSON in `DATA`. A record saved again by a later run is in a later chunk: as slackdump does,
/// the row with the highest `CHUNK_ID` wins (messages per conversation and `ID`, the ts as an integer).
package struct SlackdumpDatabase: Sendable {
    private let queue: DatabaseQueue
    package let path: String
    /// A copy made to read it (see `init`), removed when the last copy of this value goes.
    private let copy: TemporaryCopy?

    /// Opens `path` read-only. Where nothing may be created beside it (a read-only folder or mount), SQLite cannot
    /// make the `-shm` index a WAL-mode database needs: the file is opened immutable when its WAL is empty or
    /// absent, and otherwise read from a copy of it and its WAL in a temporary folder (issue 47's D10 refused such
    /// an archive as "not a slackdump archive database").
    ///
    /// - Throws: `SlackdumpError.notSlackdump` when the file is not a slackdump database.
    package init(path: String) throws {
        var config = Configuration()
        config.readonly = true
        var location = SQLiteArchive.readOnlyLocation(path)
        var copy: TemporaryCopy?
        if location == path, !Self.mayCreateBeside(path), Self.hasWAL(path) {
            do {
                let made = try TemporaryCopy(of: path)
                location = made.path
                copy = made
            } catch {
                throw SlackdumpError.notSlackdump(
                    path: path,
                    reason: "its folder is read-only and its write-ahead log could not be copied (\(error))")
            }
        }
        self.copy = copy
        do {
            queue = try DatabaseQueue(path: location, configuration: config)
            let tables = try queue.read { db in
                try String.fetchSet(db, sql: "SELECT upper(name) FROM sqlite_master WHERE type IN ('table', 'view')")
            }
            guard ["CHUNK", "MESSAGE", "CHANNEL", "S_USER"].allSatisfy(tables.contains) else {
                throw SlackdumpError.notSlackdump(path: path, reason: "it has no CHUNK, MESSAGE, CHANNEL and S_USER tables")
            }
        } catch let error as SlackdumpError {
            throw error
        } catch let error as DatabaseError {
            throw SlackdumpError.notSlackdump(path: path, reason: error.message ?? "\(error.resultCode)")
        }
        self.path = path
    }

    private static func mayCreateBeside(_ path: String) -> Bool {
        FileManager.default.isWritableFile(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    private static func hasWAL(_ path: String) -> Bool {
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        return size > 0
    }

    /// Whether the file at `path` starts like an SQLite database.
    package static func isSQLite(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        return head == Data("SQLite format 3\0".utf8)
    }

    /// The latest `DATA` of each user (`S_USER`); nil where a row holds none (NULL).
    package func users() throws -> [Data?] {
        try latest(table: "S_USER")
    }

    /// The latest `DATA` of each conversation (`CHANNEL`: `conversations.list` and `.info` answers alike); nil
    /// where a row holds none.
    package func conversations() throws -> [Data?] {
        try latest(table: "CHANNEL")
    }

    /// Message rows no history or thread chunk holds a version of, so that the import reads none of them: those
    /// whose chunk is missing and those in chunks of another type, counted by distinct message.
    package func messagesNotRead() throws -> (missingChunk: Int, otherChunkType: Int) {
        try queue.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    WITH versions AS (
                        SELECT M.CHANNEL_ID, M.ID,
                            coalesce(max(C.TYPE_ID IN (0, 1)), 0) AS readable, max(C.ID IS NOT NULL) AS chunked
                        FROM MESSAGE M LEFT JOIN CHUNK C ON C.ID = M.CHUNK_ID
                        GROUP BY M.CHANNEL_ID, M.ID
                    )
                    SELECT count(*) FILTER (WHERE NOT readable AND NOT chunked),
                        count(*) FILTER (WHERE NOT readable AND chunked)
                    FROM versions
                    """)
            return (row?[0] ?? 0, row?[1] ?? 0)
        }
    }

    /// The workspace's team id and URL, from its latest `WORKSPACE` row, when there is one.
    package func workspace() throws -> (teamID: String, url: String)? {
        try queue.read { db in
            guard try db.tableExists("WORKSPACE"),
                let row = try Row.fetchOne(db, sql: "SELECT TEAM_ID, URL FROM WORKSPACE ORDER BY CHUNK_ID DESC LIMIT 1")
            else { return nil }
            return (row["TEAM_ID"], row["URL"])
        }
    }

    private func latest(table: String) throws -> [Data?] {
        try queue.read { db in
            try Optional<Data>.fetchAll(
                db,
                sql: """
                    SELECT T.DATA FROM \(table) T
                    JOIN (SELECT ID, MAX(CHUNK_ID) AS CHUNK_ID FROM \(table) GROUP BY ID) L
                        ON T.ID = L.ID AND T.CHUNK_ID = L.CHUNK_ID
                    ORDER BY T.ID
                    """)
        }
    }

    /// How many distinct messages (conversation and ts) the history and thread chunks hold.
    package func messageCount() throws -> Int {
        try queue.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM (SELECT DISTINCT M.CHANNEL_ID, M.ID FROM MESSAGE M
                        JOIN CHUNK C ON C.ID = M.CHUNK_ID WHERE C.TYPE_ID IN (0, 1))
                    """) ?? 0
        }
    }

    /// Calls `body` with the latest version of every message of the history and thread chunks, up to `batch`
    /// at a time, in ts order across conversations: `(conversation id, message JSON)` pairs. Time order keeps
    /// the archive's indexes append-only: 14,743 messages/s on 1M messages, 9,326 in conversation order.
    ///
    /// Memory stays at one batch: rows are read through a cursor.
    package func forEachMessage(
        batch: Int, _ body: ([(conversation: String, json: Data)]) throws -> Void
    ) throws {
        try queue.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT M.CHANNEL_ID, M.DATA FROM MESSAGE M
                    JOIN (SELECT M.CHANNEL_ID, M.ID, MAX(M.CHUNK_ID) AS CHUNK_ID FROM MESSAGE M
                        JOIN CHUNK C ON C.ID = M.CHUNK_ID WHERE C.TYPE_ID IN (0, 1)
                        GROUP BY M.CHANNEL_ID, M.ID) L
                        ON M.CHANNEL_ID = L.CHANNEL_ID AND M.ID = L.ID AND M.CHUNK_ID = L.CHUNK_ID
                    ORDER BY M.ID, M.CHANNEL_ID
                    """)
            var pending: [(conversation: String, json: Data)] = []
            pending.reserveCapacity(batch)
            while let row = try rows.next() {
                let conversation: String = row["CHANNEL_ID"] ?? ""
                let json: Data = row["DATA"] ?? Data()
                pending.append((conversation, json))
                if pending.count >= batch {
                    try body(pending)
                    pending.removeAll(keepingCapacity: true)
                }
            }
            if !pending.isEmpty { try body(pending) }
        }
    }
}

/// A copy of an SQLite file and its WAL in a temporary folder, removed with the last reference.
///
/// `@unchecked Sendable`: immutable after `init`; `deinit` runs once.
private final class TemporaryCopy: @unchecked Sendable {
    let folder: URL
    let path: String

    init(of source: String) throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("slackindex-slackdump-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("slackdump.sqlite").path
        do {
            try FileManager.default.copyItem(atPath: source, toPath: path)
            try FileManager.default.copyItem(atPath: source + "-wal", toPath: path + "-wal")
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    deinit { try? FileManager.default.removeItem(at: folder) }
}

/// Why a slackdump database cannot be read.
package enum SlackdumpError: Error, CustomStringConvertible {
    case notSlackdump(path: String, reason: String)

    package var description: String {
        switch self {
        case .notSlackdump(let path, let reason):
            "\(path) is not a slackdump archive database (\(reason)). Pass the folder `slackdump archive` wrote, or "
                + "its slackdump.sqlite."
        }
    }
}
