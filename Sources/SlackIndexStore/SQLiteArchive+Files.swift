import Foundation
import GRDB

/// A file a message of the archive carries, with what fetching it needs: its metadata (URLs without tokens) and
/// the conversation and time of the first message that carries it.
public struct ArchivedFile: Sendable, Hashable {
    /// Slack's file id (`F…`).
    public var id: String
    public var name: String?
    public var title: String?
    public var mimetype: String?
    public var filetype: String?
    /// The size Slack reported, in bytes.
    public var size: Int64?
    /// `hosted`, `external`, `snippet`, `post`, `tombstone`, `hidden_by_limit`.
    public var mode: String?
    public var urlPrivate: String?
    public var urlDownload: String?
    /// The conversation's Slack id.
    public var conversationID: String
    /// The message's ts in microseconds.
    public var tsKey: Int64
    /// The row id of the (first) message carrying it, whose JSON holds the file object (thumbnails' URLs).
    public var messageID: Int64
}

/// A stored file's bytes: where they are in the archive's file store (``FileBlobs``) and what they are.
public struct FileBlob: Sendable, Hashable, Codable {
    /// SHA-256 of the bytes, 64 lowercase hex digits: the blob's name in the store.
    public var sha256: String
    public var size: Int64
    /// The type decided from the bytes and the name when the file was stored (`FileType`).
    public var contentType: String

    public init(sha256: String, size: Int64, contentType: String) {
        self.sha256 = sha256
        self.size = size
        self.contentType = contentType
    }

    private enum CodingKeys: String, CodingKey {
        case sha256, size
        case contentType = "content_type"
    }
}

extension Archive {
    /// Which of the archive's files to list.
    public struct FileSelection: Sendable {
        /// Only files of messages in these conversations (row ids); nil for all.
        public var conversations: [Int64]?
        /// Only files of messages at or after this ts (microseconds).
        public var lowerTSKey: Int64?
        /// Only files of messages before this ts (microseconds).
        public var upperTSKey: Int64?

        public init(conversations: [Int64]? = nil, lowerTSKey: Int64? = nil, upperTSKey: Int64? = nil) {
            self.conversations = conversations
            self.lowerTSKey = lowerTSKey
            self.upperTSKey = upperTSKey
        }
    }
}

extension SQLiteArchive {
    /// The schema of migration v15: which blob holds each fetched file (a file id maps to one blob; blobs are
    /// shared by files with the same bytes), and which messages' search entries hold a text file's words. Written
    /// to run again harmlessly (tests that take an archive back to an older layout forget v15 only).
    static func createFileBlobTable(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS file_blob (
                    file_id TEXT PRIMARY KEY,
                    sha256 TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    content_type TEXT NOT NULL,
                    fetched_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS file_by_id ON file(file_id) WHERE file_id IS NOT NULL;
                CREATE TABLE IF NOT EXISTS file_text (
                    message_id INTEGER NOT NULL,
                    file_id TEXT NOT NULL,
                    message_hash INTEGER NOT NULL,
                    PRIMARY KEY (message_id, file_id)
                ) WITHOUT ROWID;
                """)
    }

    /// The schema of migration v17: the thumbnail of an image file (Slack's `thumb_480`, or the nearest size),
    /// fetched so that the web UI does not load a whole photo to show it in a timeline; no blob (`sha256` NULL)
    /// when Slack answered 404 or 410 for that URL, so it is not asked for again. Written to run again harmlessly.
    static func createFileThumbTable(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS file_thumb (
                    file_id TEXT PRIMARY KEY,
                    url TEXT NOT NULL,
                    sha256 TEXT,
                    size INTEGER,
                    content_type TEXT
                ) WITHOUT ROWID;
                """)
    }

    /// Every stored thumbnail, by file id.
    ///
    /// - Complexity: O(n).
    package func fileThumbs() throws -> [String: FileBlob] {
        try pool.read { db in try Self.blobsByFile(in: "file_thumb", db) }
    }

    /// The blobs of `table` (`file_blob` or `file_thumb`: `file_id`, `sha256`, `size`, `content_type`) by file id.
    private static func blobsByFile(in table: String, _ db: Database) throws -> [String: FileBlob] {
        var out: [String: FileBlob] = [:]
        let rows = try Row.fetchCursor(
            db, sql: "SELECT file_id, sha256, size, content_type FROM \(table) WHERE sha256 IS NOT NULL")
        while let row = try rows.next() {
            out[row["file_id"]] = FileBlob(sha256: row["sha256"], size: row["size"], contentType: row["content_type"])
        }
        return out
    }

    /// The thumbnails Slack answered 404 or 410 for: file id → the URL asked.
    ///
    /// - Complexity: O(n).
    package func goneThumbnails() throws -> [String: String] {
        try pool.read { db in
            var out: [String: String] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT file_id, url FROM file_thumb WHERE sha256 IS NULL")
            while let row = try rows.next() { out[row["file_id"]] = row["url"] }
            return out
        }
    }

    /// Records that Slack has no thumbnail of file `id` at `url` (404 or 410), so later runs do not ask again
    /// (unless the message gives another URL).
    ///
    /// - Throws: `StoreError.writeFailed` when the archive cannot be written (a full disk).
    package func recordGoneThumbnail(id: String, url: String) throws {
        do {
            try pool.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO file_thumb (file_id, url) VALUES (?, ?)", arguments: [id, url])
            }
        } catch {
            throw StoreError.writeFailure(error, path: path) ?? error
        }
    }

    /// Records that file `id`'s thumbnail, fetched from `url`, is `blob` (already durable in the file store).
    ///
    /// - Throws: `StoreError.writeFailed` when the archive cannot be written (a full disk).
    /// - Complexity: O(log n).
    package func recordFileThumb(id: String, url: String, blob: FileBlob) throws {
        do {
            try pool.write { db in
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO file_thumb (file_id, url, sha256, size, content_type)
                        VALUES (?, ?, ?, ?, ?)
                        """, arguments: [id, url, blob.sha256, blob.size, blob.contentType])
            }
        } catch {
            throw StoreError.writeFailure(error, path: path) ?? error
        }
    }

    /// The thumbnail of a file whose conversation `token` may read (the file's own rule); nil otherwise.
    ///
    /// - Complexity: that of ``visibleFileBlob(id:to:)``, plus O(log n).
    package func visibleFileThumb(id: String, to token: APIToken) throws -> FileBlob? {
        guard try visibleFileBlob(id: id, to: token) != nil else { return nil }
        return try pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT sha256, size, content_type FROM file_thumb WHERE file_id = ? AND sha256 IS NOT NULL",
                arguments: [id]
            ).map { FileBlob(sha256: $0["sha256"], size: $0["size"], contentType: $0["content_type"]) }
        }
    }

    /// The files among those of `messageIDs` whose thumbnail is stored.
    ///
    /// - Complexity: O(messages × their files).
    package func storedThumbnails(messageIDs: [Int64]) throws -> Set<String> {
        guard !messageIDs.isEmpty else { return [] }
        return try pool.read { db in
            Set(
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT t.file_id FROM file f JOIN file_thumb t ON t.file_id = f.file_id AND t.sha256 IS NOT NULL
                        WHERE f.message_id IN (\(messageIDs.map { _ in "?" }.joined(separator: ",")))
                        """, arguments: StatementArguments(messageIDs)))
        }
    }

    /// Adds a text file's words to the search index entry of every message (not deleted) that carries it, so a
    /// word only in an attached snippet finds the message. The text goes at the end of the message's
    /// `search_extra`; `file_text` records it with the message's hash, so this does nothing when done already,
    /// and does it again after an import rewrote the message (its hash, and its `search_extra`, changed).
    ///
    /// - Returns: the messages whose entry changed.
    /// - Throws: `StoreError.writeFailed` when the archive cannot be written.
    /// - Complexity: O(messages carrying the file × their text).
    @discardableResult
    package func indexFileText(fileID: String, text: String) throws -> Int {
        do {
            return try pool.write { db in
                // The counts of the index's words: stored with the entries, forgotten with a failed write.
                try WordCounts.of(db).owning(db) {
                    let rows = try Row.fetchAll(
                        db,
                        sql: """
                            SELECT m.id, m.hash, m.text, m.search_text, m.search_extra, m.conversation_id, m.user_id,
                                t.message_hash AS done
                            FROM file f JOIN message m ON m.id = f.message_id
                            LEFT JOIN file_text t ON t.message_id = m.id AND t.file_id = f.file_id
                            WHERE f.file_id = ? AND m.is_deleted = 0
                            """, arguments: [fileID])
                    var changed = 0
                    for row in rows {
                        let id: Int64 = row["id"]
                        let hash: Int64 = row["hash"]
                        if let done: Int64 = row["done"], done == hash { continue }
                        if text.isEmpty {
                            // A file with no text to add (a PDF without a text layer): recorded as done, index untouched.
                            try db.execute(
                                sql: "INSERT OR REPLACE INTO file_text (message_id, file_id, message_hash) VALUES (?, ?, ?)",
                                arguments: [id, fileID, hash])
                            changed += 1
                            continue
                        }
                        let searchText = SearchTextColumn.value(stored: row["search_text"], text: row["text"])
                        let extra: String = row["search_extra"]
                        let extended = extra.isEmpty ? text : extra + "\n" + text
                        let scope: MessageWriter.Scope = (row["conversation_id"], row["user_id"])
                        try MessageWriter.indexDelete(id: id, searchText, extra, scope: scope, in: db)
                        try db.execute(sql: "UPDATE message SET search_extra = ? WHERE id = ?", arguments: [extended, id])
                        try MessageWriter.indexInsert(id: id, searchText, extended, scope: scope, in: db)
                        try db.execute(
                            sql: "INSERT OR REPLACE INTO file_text (message_id, file_id, message_hash) VALUES (?, ?, ?)",
                            arguments: [id, fileID, hash])
                        changed += 1
                    }
                    return changed
                }
            }
        } catch {
            throw StoreError.writeFailure(error, path: path) ?? error
        }
    }

    /// The fetched files among those of `messageIDs`: file id → the blob's content type.
    ///
    /// - Complexity: O(messages × their files).
    package func storedFileTypes(messageIDs: [Int64]) throws -> [String: String] {
        guard !messageIDs.isEmpty else { return [:] }
        return try pool.read { db in
            var out: [String: String] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT b.file_id, b.content_type FROM file f JOIN file_blob b ON b.file_id = f.file_id
                    WHERE f.message_id IN (\(messageIDs.map { _ in "?" }.joined(separator: ",")))
                    """, arguments: StatementArguments(messageIDs))
            while let row = try rows.next() { out[row["file_id"]] = row["content_type"] }
            return out
        }
    }

    /// True when a message (not deleted) carrying file `id` lacks its text in its search entry
    /// (``indexFileText(fileID:text:)`` has something to do): a read, so a run over a complete store writes nothing.
    ///
    /// - Complexity: O(log n + messages carrying the file).
    package func fileTextPending(fileID: String) throws -> Bool {
        try pool.read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (
                        SELECT 1 FROM file f JOIN message m ON m.id = f.message_id
                        LEFT JOIN file_text t ON t.message_id = m.id AND t.file_id = f.file_id
                        WHERE f.file_id = ? AND m.is_deleted = 0 AND (t.message_hash IS NULL OR t.message_hash != m.hash))
                    """, arguments: [fileID]) ?? false
        }
    }

    /// For each of `messageIDs` whose search entry holds a file's text (``indexFileText(fileID:text:)``), those
    /// files: id, name and blob.
    ///
    /// - Complexity: O(messages × their files).
    package func indexedFileTexts(messageIDs: [Int64]) throws -> [Int64: [(id: String, name: String?, blob: FileBlob)]] {
        guard !messageIDs.isEmpty else { return [:] }
        return try pool.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT t.message_id, t.file_id, f.name, b.sha256, b.size, b.content_type
                    FROM file_text t
                    JOIN message m ON m.id = t.message_id AND m.hash = t.message_hash
                    JOIN file f ON f.message_id = t.message_id AND f.file_id = t.file_id
                    JOIN file_blob b ON b.file_id = t.file_id
                    WHERE t.message_id IN (\(messageIDs.map { _ in "?" }.joined(separator: ",")))
                    """, arguments: StatementArguments(messageIDs))
            var out: [Int64: [(id: String, name: String?, blob: FileBlob)]] = [:]
            while let row = try rows.next() {
                out[row["message_id"], default: []].append(
                    (row["file_id"], row["name"],
                     FileBlob(sha256: row["sha256"], size: row["size"], contentType: row["content_type"])))
            }
            return out
        }
    }

    /// The files of messages not deleted that `selection` picks, each once (by file id, the first message that
    /// carries it), oldest first.
    ///
    /// - Complexity: O(files) rows read, one pass in message order.
    package func archivedFiles(_ selection: Archive.FileSelection = Archive.FileSelection()) throws -> [ArchivedFile] {
        var conditions = ["f.file_id IS NOT NULL", "m.is_deleted = 0"]
        var arguments: [any DatabaseValueConvertible] = []
        if let conversations = selection.conversations {
            conditions.append("m.conversation_id IN (\(conversations.map { _ in "?" }.joined(separator: ",")))")
            arguments += conversations
        }
        if let lower = selection.lowerTSKey {
            conditions.append("m.ts_key >= ?")
            arguments.append(lower)
        }
        if let upper = selection.upperTSKey {
            conditions.append("m.ts_key < ?")
            arguments.append(upper)
        }
        return try pool.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT f.file_id, f.name, f.title, f.mimetype, f.filetype, f.size, f.mode, f.url_private,
                        f.url_download, c.slack_id, m.ts_key, m.id AS message_id
                    FROM file f JOIN message m ON m.id = f.message_id JOIN conversation c ON c.id = m.conversation_id
                    WHERE \(conditions.joined(separator: " AND "))
                    ORDER BY m.id, f.position
                    """, arguments: StatementArguments(arguments))
            var seen = Set<String>()
            var out: [ArchivedFile] = []
            while let row = try rows.next() {
                let id: String = row["file_id"]
                guard seen.insert(id).inserted else { continue }
                out.append(
                    ArchivedFile(
                        id: id, name: row["name"], title: row["title"], mimetype: row["mimetype"],
                        filetype: row["filetype"], size: row["size"], mode: row["mode"],
                        urlPrivate: row["url_private"], urlDownload: row["url_download"],
                        conversationID: row["slack_id"], tsKey: row["ts_key"], messageID: row["message_id"]))
            }
            return out
        }
    }

    /// Every file id that has a blob, with the blob.
    ///
    /// - Complexity: O(fetched files).
    package func fileBlobs() throws -> [String: FileBlob] {
        try pool.read { db in try Self.blobsByFile(in: "file_blob", db) }
    }

    /// The blob of file `id`, when it was fetched.
    ///
    /// - Complexity: O(log n).
    package func fileBlob(id: String) throws -> FileBlob? {
        try pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT sha256, size, content_type FROM file_blob WHERE file_id = ?", arguments: [id]
            ).map { FileBlob(sha256: $0["sha256"], size: $0["size"], contentType: $0["content_type"]) }
        }
    }

    /// The blob of file `id` and the file's name, when it was fetched and `token` may read a conversation with a
    /// message (not deleted) that carries it: the same rule as for the messages themselves.
    ///
    /// - Complexity: O(log n + messages carrying the file × members).
    package func visibleFileBlob(id: String, to token: APIToken) throws -> (blob: FileBlob, name: String?)? {
        let (condition, arguments) = SQLiteArchive.visibility(token)
        return try pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT b.sha256, b.size, b.content_type, f.name
                    FROM file_blob b
                    JOIN file f ON f.file_id = b.file_id
                    JOIN message m ON m.id = f.message_id AND m.is_deleted = 0
                    JOIN conversation c ON c.id = m.conversation_id
                    WHERE b.file_id = ? AND \(condition)
                    LIMIT 1
                    """, arguments: [id] + arguments
            ).map {
                (FileBlob(sha256: $0["sha256"], size: $0["size"], contentType: $0["content_type"]), $0["name"])
            }
        }
    }

    /// Records that file `id`'s bytes are the blob `blob` (already durable in the file store): from now on the
    /// file counts as fetched.
    ///
    /// - Throws: `StoreError.writeFailed` when the archive cannot be written (a full disk).
    /// - Complexity: O(log n).
    package func recordFileBlob(id: String, blob: FileBlob, now: Date = Date()) throws {
        do {
            try pool.write { db in
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO file_blob (file_id, sha256, size, content_type, fetched_at)
                        VALUES (?, ?, ?, ?, ?)
                        """,
                    arguments: [id, blob.sha256, blob.size, blob.contentType, Int64(now.timeIntervalSince1970)])
            }
        } catch {
            throw StoreError.writeFailure(error, path: path) ?? error
        }
    }
}
