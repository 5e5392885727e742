import PostgresNIO

// The web UI's sessions on PostgreSQL, as on SQLite (`WebSession`, `SQLiteArchive.startSession`): every `serve`
// over the archive reads the same table, so a session made through one server works on the others.
extension PostgresArchive {
    /// Keeps a new session: ends every session past `cutoff`, then the holder's oldest beyond `perHolder`.
    package func startSession(
        id: String, for token: APIToken, owner: Bool, at now: Int64, perHolder: Int, cutoff: SessionCutoff
    ) throws {
        let holder: Int64? = owner ? nil : token.id
        try link.transaction {
            try link.query(
                "DELETE FROM web_session WHERE last_used <= $1 OR started <= $2",
                .of(cutoff.idleBefore, cutoff.startedBefore))
            var binds = PostgresBindings.of(APIToken.hash(id))
            binds.append(holder)
            binds.append(token.userID)
            binds.append(token.isAdmin)
            binds.append(token.label)
            binds.append(now)
            try link.query(
                """
                INSERT INTO web_session (id_hash, token_id, user_id, is_admin, label, started, last_used)
                VALUES ($1, $2, $3, $4, $5, $6, $6)
                """, binds)
            var trim = PostgresBindings()
            trim.append(holder)
            trim.append(Int64(max(1, perHolder)))
            try link.query(
                """
                DELETE FROM web_session WHERE token_id IS NOT DISTINCT FROM $1 AND id NOT IN (
                    SELECT id FROM web_session WHERE token_id IS NOT DISTINCT FROM $1 ORDER BY id DESC LIMIT $2)
                """, trim)
        }
    }

    /// The session `id` names (its SHA-256 is what is kept), with its token's current record; nil when there is none or its
    /// token was revoked. Read where reads go (a replica); one not found there is asked of the primary, which a
    /// session made a moment ago through another server may not have reached yet.
    package func session(id: String) throws -> WebSession? {
        let (sql, hash) = (WebSession.selectByHash + " $1", APIToken.hash(id))
        var rows = try link.query(sql, .of(hash))
        if rows.isEmpty, link.readsElsewhere { rows = (try? link.query(sql, .of(hash), on: .primary)) ?? [] }
        guard let row = rows.first else { return nil }
        let token = try row.optionalInt("id").map { id in
            APIToken(
                id: id, userID: try row.string("user_id"), isAdmin: try row.bool("is_admin"),
                created: try row.int("created"), label: try row.optionalString("label"))
        }
        return WebSession.from(
            tokenID: try row.optionalInt("token_id"),
            owner: (try row.string("s_user"), try row.bool("s_admin"), try row.optionalString("s_label")),
            started: try row.int("started"), lastUsed: try row.int("last_used"), token: token)
    }

    /// Records a use of the session (its idle time starts again).
    package func touchSession(id: String, at now: Int64) throws {
        try link.query("UPDATE web_session SET last_used = $1 WHERE id_hash = $2", .of(now, APIToken.hash(id)))
    }

    /// Ends the session (nothing when there is none).
    package func endSession(id: String) throws {
        try link.query("DELETE FROM web_session WHERE id_hash = $1", .of(APIToken.hash(id)))
    }
}
