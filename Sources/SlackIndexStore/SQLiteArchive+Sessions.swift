import Foundation
import GRDB

/// A web UI session as an archive keeps it (issue 51: any `serve` over the archive answers a session another made,
/// and revoking a token ends its sessions everywhere at once). The archive holds the SHA-256 of the session's id,
/// never the id, and never a token: a token's session names the token by row id, and reads it back joined, so a
/// revoked token's sessions find nothing. The owner's sessions (`serve --open`) have no token: their record is kept
/// in the row.
package struct WebSession: Sendable, Equatable {
    /// What the session stands for: its token's current record, or the owner's record (id 0, admin).
    package var token: APIToken
    /// True for the owner's session (`serve --open`), which no token backs.
    package var isOwners: Bool
    /// When it began and was last used, in milliseconds of the server's clock (wall time, shared by the servers).
    package var started: Int64
    package var lastUsed: Int64

    /// The table, the same on both backends but for its types (`PostgresSchema`'s `pg4-sessions`).
    static let sqliteTable = """
        CREATE TABLE IF NOT EXISTS web_session (
            id INTEGER PRIMARY KEY,
            id_hash TEXT NOT NULL UNIQUE,
            token_id INTEGER,
            user_id TEXT NOT NULL,
            is_admin INTEGER NOT NULL,
            label TEXT,
            started INTEGER NOT NULL,
            last_used INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS web_session_holder ON web_session(token_id, id);
        """

    /// The columns `session(id:)` reads on both backends.
    static let selectByHash = """
        SELECT s.token_id, s.user_id AS s_user, s.is_admin AS s_admin, s.label AS s_label, s.started, s.last_used,
            t.id, t.user_id, t.is_admin, t.created, t.label
        FROM web_session s LEFT JOIN api_token t ON t.id = s.token_id
        WHERE s.id_hash =
        """

    /// The session a row of `selectByHash` describes; nil when its token is gone (revoked).
    static func from(
        tokenID: Int64?, owner: (userID: String, isAdmin: Bool, label: String?), started: Int64, lastUsed: Int64,
        token: APIToken?
    ) -> WebSession? {
        if tokenID == nil {
            let record = APIToken(
                id: 0, userID: owner.userID, isAdmin: owner.isAdmin, created: started / 1000, label: owner.label)
            return WebSession(token: record, isOwners: true, started: started, lastUsed: lastUsed)
        }
        guard let token else { return nil }
        return WebSession(token: token, isOwners: false, started: started, lastUsed: lastUsed)
    }
}

/// When sessions end: unused since `idleBefore`, or begun before `startedBefore` (milliseconds of the same clock).
package struct SessionCutoff: Sendable {
    package var idleBefore: Int64
    package var startedBefore: Int64

    package init(idleBefore: Int64, startedBefore: Int64) {
        self.idleBefore = idleBefore
        self.startedBefore = startedBefore
    }
}

extension SQLiteArchive {
    /// Keeps a new session: ends every session past `cutoff`, then the holder's oldest beyond `perHolder` (the
    /// holder is the token, or the owner for an owner's session), never another holder's.
    ///
    /// - Complexity: O(log n) for the insert, plus the sessions ended.
    package func startSession(
        id: String, for token: APIToken, owner: Bool, at now: Int64, perHolder: Int, cutoff: SessionCutoff
    ) throws {
        let holder: Int64? = owner ? nil : token.id
        try pool.write { db in
            try db.execute(
                sql: "DELETE FROM web_session WHERE last_used <= ? OR started <= ?",
                arguments: [cutoff.idleBefore, cutoff.startedBefore])
            try db.execute(
                sql: """
                    INSERT INTO web_session (id_hash, token_id, user_id, is_admin, label, started, last_used)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [APIToken.hash(id), holder, token.userID, token.isAdmin, token.label, now, now])
            try db.execute(
                sql: """
                    DELETE FROM web_session WHERE token_id IS ? AND id NOT IN (
                        SELECT id FROM web_session WHERE token_id IS ? ORDER BY id DESC LIMIT ?)
                    """,
                arguments: [holder, holder, max(1, perHolder)])
        }
    }

    /// The session `id` names (its SHA-256 is what is kept), with its token's current record; nil when there is none or its
    /// token was revoked.
    ///
    /// - Complexity: O(log n): one lookup on the hash's unique index and one on the token's key.
    package func session(id: String) throws -> WebSession? {
        try pool.read { db in
            guard let row = try Row.fetchOne(db, sql: WebSession.selectByHash + " ?", arguments: [APIToken.hash(id)]) else {
                return nil
            }
            let tokenID: Int64? = row["token_id"]
            let token = (row["id"] as Int64?).map { id in
                APIToken(
                    id: id, userID: row["user_id"], isAdmin: row["is_admin"], created: row["created"],
                    label: row["label"])
            }
            return WebSession.from(
                tokenID: tokenID, owner: (row["s_user"], row["s_admin"], row["s_label"]), started: row["started"],
                lastUsed: row["last_used"], token: token)
        }
    }

    /// Records a use of the session (its idle time starts again).
    package func touchSession(id: String, at now: Int64) throws {
        try pool.write { db in
            try db.execute(sql: "UPDATE web_session SET last_used = ? WHERE id_hash = ?", arguments: [now, APIToken.hash(id)])
        }
    }

    /// Ends the session (nothing when there is none).
    package func endSession(id: String) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM web_session WHERE id_hash = ?", arguments: [APIToken.hash(id)])
        }
    }
}
