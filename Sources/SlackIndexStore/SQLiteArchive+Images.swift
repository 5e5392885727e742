import Foundation
import GRDB

/// A workspace-wide image: a member's profile image (avatar) or a custom emoji, with its URL at Slack and, once
/// fetched, the blob of the file store (``FileBlobs``) that holds it.
public struct WorkspaceImage: Sendable, Hashable {
    /// Which kind of image.
    public enum Kind: String, Sendable, CaseIterable {
        case avatar
        case emoji
    }

    public var kind: Kind
    /// The member's id (`U…`) for an avatar, the emoji's name for an emoji.
    public var key: String
    /// Where Slack serves it (public URLs: `avatars.slack-edge.com`, `emoji.slack-edge.com`, gravatar).
    public var url: String
    /// The blob, when fetched.
    public var blob: FileBlob?
    /// The URL the blob was fetched from: another than `url` when the member changed their picture since.
    public var fetchedURL: String?

    public init(kind: Kind, key: String, url: String, blob: FileBlob? = nil, fetchedURL: String? = nil) {
        self.kind = kind
        self.key = key
        self.url = url
        self.blob = blob
        self.fetchedURL = fetchedURL
    }
}

/// A custom emoji as `emoji.list` names it: an image URL, or `alias:<other name>`.
public struct CustomEmoji: Sendable, Hashable {
    public var name: String
    /// The image's URL; nil for an alias.
    public var url: String?
    /// The emoji this name stands for (`alias:other` → `other`): a custom emoji or a standard one.
    public var aliasOf: String?

    public init(name: String, url: String? = nil, aliasOf: String? = nil) {
        self.name = name
        self.url = url
        self.aliasOf = aliasOf
    }
}

/// What the archive holds of avatars and custom emoji, for a reader (the web UI): only stored images.
public struct StoredImages: Sendable, Equatable {
    /// Member id → the SHA-256 of their stored avatar.
    public var avatars: [String: String] = [:]
    /// Custom emoji name (aliases included, resolved) → the SHA-256 of its stored image.
    public var emoji: [String: String] = [:]
    /// Custom names that are aliases of a standard emoji (`thumbs` → `+1`).
    public var standardAliases: [String: String] = [:]

    public init() {}
}

extension SQLiteArchive {
    /// The schema of migration v16: each member's profile image URL and the custom emoji, each with the blob that
    /// holds it once fetched (and the URL it came from). Written to run again harmlessly.
    static func createWorkspaceImageTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS avatar (
                    user_id TEXT PRIMARY KEY,
                    url TEXT NOT NULL,
                    sha256 TEXT,
                    size INTEGER,
                    content_type TEXT,
                    fetched_url TEXT
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS custom_emoji (
                    name TEXT PRIMARY KEY,
                    url TEXT,
                    alias_of TEXT,
                    sha256 TEXT,
                    size INTEGER,
                    content_type TEXT,
                    fetched_url TEXT
                ) WITHOUT ROWID;
                """)
    }

    /// Records members' profile image URLs (`user id → URL`), keeping a fetched blob until a run fetches the new
    /// URL's.
    ///
    /// - Complexity: O(k log n) for k members.
    static func upsertAvatarURLs(_ urls: [(String, String)], in db: Database) throws {
        guard !urls.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO avatar (user_id, url) VALUES (?, ?)
                ON CONFLICT (user_id) DO UPDATE SET url = excluded.url WHERE url != excluded.url
                """)
        for (id, url) in urls {
            statement.setUncheckedArguments([id, url])
            try statement.execute()
        }
    }

    /// Records the workspace's custom emoji (`emoji.list`): new names are added, changed ones updated; names no
    /// longer listed stay (old messages still show them). Returns how many were added or changed.
    ///
    /// - Throws: `StoreError.writeFailed` when the archive cannot be written.
    /// - Complexity: O(k log n) for k emoji.
    @discardableResult
    package func storeCustomEmoji(_ emoji: [CustomEmoji]) throws -> Int {
        do {
            return try pool.write { db in
                let statement = try db.cachedStatement(
                    sql: """
                        INSERT INTO custom_emoji (name, url, alias_of) VALUES (?, ?, ?)
                        ON CONFLICT (name) DO UPDATE SET url = excluded.url, alias_of = excluded.alias_of
                        WHERE url IS NOT excluded.url OR alias_of IS NOT excluded.alias_of
                        """)
                var changed = 0
                for item in emoji {
                    statement.setUncheckedArguments([item.name, item.url, item.aliasOf])
                    try statement.execute()
                    changed += db.changesCount
                }
                return changed
            }
        } catch {
            throw StoreError.writeFailure(error, path: path) ?? error
        }
    }

    /// Every avatar (members with a profile image URL) or every custom emoji that has an image (not aliases),
    /// with its blob when fetched, by key.
    ///
    /// - Complexity: O(n).
    package func workspaceImages(_ kind: WorkspaceImage.Kind) throws -> [WorkspaceImage] {
        let sql =
            switch kind {
            case .avatar: "SELECT user_id AS key, url, sha256, size, content_type, fetched_url FROM avatar ORDER BY 1"
            case .emoji:
                """
                SELECT name AS key, url, sha256, size, content_type, fetched_url FROM custom_emoji
                WHERE url IS NOT NULL ORDER BY 1
                """
            }
        return try pool.read { db in
            try Row.fetchAll(db, sql: sql).map { row in
                WorkspaceImage(kind: kind, key: row["key"], url: row["url"], blob: Self.blob(row), fetchedURL: row["fetched_url"])
            }
        }
    }

    /// Records that the image `key` fetched from `url` is the blob `blob` (already durable in the file store).
    ///
    /// - Throws: `StoreError.writeFailed` when the archive cannot be written (a full disk).
    /// - Complexity: O(log n).
    package func recordImageBlob(_ kind: WorkspaceImage.Kind, key: String, url: String, blob: FileBlob) throws {
        let sql =
            switch kind {
            case .avatar:
                "UPDATE avatar SET sha256 = ?, size = ?, content_type = ?, fetched_url = ? WHERE user_id = ?"
            case .emoji:
                "UPDATE custom_emoji SET sha256 = ?, size = ?, content_type = ?, fetched_url = ? WHERE name = ?"
            }
        do {
            try pool.write { db in
                try db.execute(sql: sql, arguments: [blob.sha256, blob.size, blob.contentType, url, key])
            }
        } catch {
            throw StoreError.writeFailure(error, path: path) ?? error
        }
    }

    /// The stored blob of member `key`'s avatar or of custom emoji `key` (an alias followed to its image, at most
    /// a few steps, so a loop of aliases ends); nil when not stored.
    ///
    /// - Complexity: O(log n).
    package func imageBlob(_ kind: WorkspaceImage.Kind, key: String) throws -> FileBlob? {
        try pool.read { db in
            switch kind {
            case .avatar:
                return try Row.fetchOne(
                    db, sql: "SELECT sha256, size, content_type FROM avatar WHERE user_id = ?", arguments: [key]
                ).flatMap(Self.blob)
            case .emoji:
                var name = key
                for _ in 0..<Self.aliasSteps {
                    guard
                        let row = try Row.fetchOne(
                            db, sql: "SELECT alias_of, sha256, size, content_type FROM custom_emoji WHERE name = ?",
                            arguments: [name])
                    else { return nil }
                    if let next: String = row["alias_of"] {
                        name = next
                        continue
                    }
                    return Self.blob(row)
                }
                return nil
            }
        }
    }

    /// Aliases followed at most.
    static let aliasSteps = 4

    /// The stored avatars and custom emoji (aliases resolved), for a reader.
    ///
    /// - Complexity: O(avatars + emoji).
    package func storedImages() throws -> StoredImages {
        try pool.read { db in
            var out = StoredImages()
            let avatars = try Row.fetchCursor(db, sql: "SELECT user_id, sha256 FROM avatar WHERE sha256 IS NOT NULL")
            while let row = try avatars.next() { out.avatars[row["user_id"]] = row["sha256"] }
            var images: [String: String] = [:]
            var aliases: [String: String] = [:]
            let emoji = try Row.fetchCursor(db, sql: "SELECT name, alias_of, sha256 FROM custom_emoji")
            while let row = try emoji.next() {
                if let alias: String = row["alias_of"] {
                    aliases[row["name"]] = alias
                } else if let sha: String = row["sha256"] {
                    images[row["name"]] = sha
                }
            }
            out.emoji = images
            for (name, target) in aliases {
                var next = target
                var steps = 1
                while let further = aliases[next], steps < Self.aliasSteps {
                    next = further
                    steps += 1
                }
                if let sha = images[next] {
                    out.emoji[name] = sha
                } else if aliases[next] == nil, images[next] == nil,
                    try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM custom_emoji WHERE name = ?)", arguments: [next])
                        == false
                {
                    // Not a custom emoji: a standard one (`alias:thumbsup`).
                    out.standardAliases[name] = next
                }
            }
            return out
        }
    }

    private static func blob(_ row: Row) -> FileBlob? {
        guard let sha: String = row["sha256"], let size: Int64 = row["size"], let type: String = row["content_type"]
        else { return nil }
        return FileBlob(sha256: sha, size: size, contentType: type)
    }
}
