import Crypto
import Foundation
import GRDB

/// A token of `slackindex serve`, as stored: never the token itself, only what it grants.
public struct APIToken: Sendable, Hashable, Codable {
    /// The token's row id (what `token revoke` takes).
    public var id: Int64
    /// The archive user the token acts as.
    public var userID: String
    /// An admin token sees every conversation; others see public channels and the conversations their user is a
    /// member of.
    public var isAdmin: Bool
    /// When the token was made, seconds since the epoch.
    public var created: Int64
    public var label: String?

    public init(id: Int64, userID: String, isAdmin: Bool, created: Int64, label: String? = nil) {
        self.id = id
        self.userID = userID
        self.isAdmin = isAdmin
        self.created = created
        self.label = label
    }

    private enum CodingKeys: String, CodingKey {
        case id, created, label
        case userID = "user_id"
        case isAdmin = "is_admin"
    }
}

/// Why a token could not be made or removed; `description` is what the user sees.
public enum TokenError: Error, CustomStringConvertible, Sendable {
    case unknownUser(String)
    case unknownToken(Int64)

    public var description: String {
        switch self {
        case .unknownUser(let id):
            "No user with id '\(id)' in the archive. A token acts as one of the archive's users (ids start with U)."
        case .unknownToken(let id):
            "No token with id \(id) in the archive."
        }
    }
}

extension Archive {
    /// The prefix of every token made here, so leaked tokens are recognisable (as Slack's `xoxp-`).
    public static let tokenPrefix = "xoxp-slackindex-"
}

extension APIToken {
    /// A new token: `xoxp-slackindex-` and 40 base62 characters from `SystemRandomNumberGenerator` (≈238 bits).
    /// Every backend stores only its `hash`.
    static func generate() -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        var generator = SystemRandomNumberGenerator()
        let secret = String((0..<40).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        return Archive.tokenPrefix + secret
    }

    /// SHA-256 of the token's UTF-8 bytes, lowercase hex: what an archive stores of a token.
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// Whether this token may read `conversation`: public channels are open to every token; private channels, DMs
    /// and group DMs only to their members; an admin token reads everything. (The SQLite archive says the same
    /// in SQL: `SQLiteArchive.visibility`.)
    package func mayRead(_ conversation: Conversation) -> Bool {
        isAdmin || conversation.kind == .channel || conversation.members.contains(userID)
    }
}

extension SQLiteArchive {
    /// Makes a token for `userID` and returns it in plain text: the only time it exists outside its holder.
    ///
    /// The token is `APIToken.generate()`'s; only its SHA-256 is stored.
    /// - Throws: `TokenError.unknownUser` when the archive has no such user.
    /// - Complexity: O(log n).
    package func createToken(userID: String, isAdmin: Bool = false, label: String? = nil, now: Date = Date())
        throws -> (token: String, record: APIToken)
    {
        let token = APIToken.generate()
        let created = Int64(now.timeIntervalSince1970)
        let id = try pool.write { db -> Int64 in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM user WHERE id = ?)", arguments: [userID])
                == true
            else { throw TokenError.unknownUser(userID) }
            try db.execute(
                sql: "INSERT INTO api_token (hash, user_id, is_admin, created, label) VALUES (?, ?, ?, ?, ?)",
                arguments: [APIToken.hash(token), userID, isAdmin, created, label])
            return db.lastInsertedRowID
        }
        return (token, APIToken(id: id, userID: userID, isAdmin: isAdmin, created: created, label: label))
    }

    /// The token record for a presented token, or nil when it is not one of the archive's.
    ///
    /// - Complexity: O(log n) (one lookup on the hash's unique index).
    package func verifyToken(_ token: String) throws -> APIToken? {
        guard token.hasPrefix(Archive.tokenPrefix) else { return nil }
        return try pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT id, user_id, is_admin, created, label FROM api_token WHERE hash = ?",
                arguments: [APIToken.hash(token)]
            ).map(SQLiteArchive.token)
        }
    }

    /// Every token, oldest first (no secrets: those are not stored).
    ///
    /// - Complexity: O(t) for t tokens.
    package func tokens() throws -> [APIToken] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, user_id, is_admin, created, label FROM api_token ORDER BY id")
                .map(SQLiteArchive.token)
        }
    }

    /// Removes a token and its web UI sessions; requests carrying it fail with `invalid_auth` from then on.
    ///
    /// - Throws: `TokenError.unknownToken` when there is no token with that id.
    /// - Complexity: O(log n).
    package func revokeToken(id: Int64) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM api_token WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw TokenError.unknownToken(id) }
            try db.execute(sql: "DELETE FROM web_session WHERE token_id = ?", arguments: [id])
        }
    }

    private static func token(_ row: Row) -> APIToken {
        APIToken(
            id: row["id"], userID: row["user_id"], isAdmin: row["is_admin"], created: row["created"],
            label: row["label"])
    }
}
