/// The web UI's sessions, each counted against its holder (a token, or the owner) and ending on its own clock.
///
/// A holder keeps at most `perHolder` sessions: its next one ends its own oldest, never another holder's, so
/// signing in again and again with one token cannot sign anyone else out. A session ends `idle` after its last
/// use and `lifetime` after it began, whichever comes first. Sessions exist only for tokens the archive verified
/// (and the owner), so the table holds at most `perHolder` × (tokens + 1) sessions.
///
/// A plain struct; `WebUI` keeps it in a `Mutex`.
struct SessionTable {
    private struct Entry {
        var session: WebUI.Session
        var holder: String
        var started: Duration
        var lastUsed: Duration
    }

    let perHolder: Int
    let idle: Duration
    let lifetime: Duration
    private var byID: [String: Entry] = [:]
    /// Each holder's session ids, oldest first.
    private var byHolder: [String: [String]] = [:]

    init(perHolder: Int, idle: Duration, lifetime: Duration) {
        self.perHolder = max(1, perHolder)
        self.idle = idle
        self.lifetime = lifetime
    }

    /// Adds session `id` for `holder`, ending that holder's oldest session past `perHolder`, and every session
    /// that has ended by `now`.
    ///
    /// - Complexity: O(n) for the n sessions held (the sweep of ended ones).
    mutating func insert(_ id: String, _ session: WebUI.Session, holder: String, at now: Duration) {
        for (id, entry) in byID where hasEnded(entry, at: now) { remove(id) }
        byID[id] = Entry(session: session, holder: holder, started: now, lastUsed: now)
        byHolder[holder, default: []].append(id)
        while let ids = byHolder[holder], ids.count > perHolder, let oldest = ids.first { remove(oldest) }
    }

    /// The session `id` names if it has not ended, counting this as a use; an ended one is removed.
    ///
    /// - Complexity: O(1), or O(k) for the holder's k ≤ `perHolder` sessions when it has ended.
    mutating func use(_ id: String, at now: Duration) -> WebUI.Session? {
        guard var entry = byID[id] else { return nil }
        guard !hasEnded(entry, at: now) else {
            remove(id)
            return nil
        }
        entry.lastUsed = now
        byID[id] = entry
        return entry.session
    }

    /// Ends session `id` (nothing when there is none).
    ///
    /// - Complexity: O(k) for the holder's k ≤ `perHolder` sessions.
    mutating func remove(_ id: String) {
        guard let entry = byID.removeValue(forKey: id) else { return }
        byHolder[entry.holder]?.removeAll { $0 == id }
        if byHolder[entry.holder]?.isEmpty == true { byHolder[entry.holder] = nil }
    }

    private func hasEnded(_ entry: Entry, at now: Duration) -> Bool {
        now - entry.lastUsed >= idle || now - entry.started >= lifetime
    }
}
