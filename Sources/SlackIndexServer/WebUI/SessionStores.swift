import SlackIndex
import Synchronization

/// Where the web UI keeps its sessions: in the archive (`ArchiveSessions`, so that every `serve` over it answers
/// them), or in this process (`MemorySessions`) when the archive is opened read-only and nothing can be written.
/// Both end a session `idle` after its last use and `lifetime` after it began, and keep at most `perHolder` per
/// holder (`SessionTable`'s rules). Blocking: called off the event loops.
protocol SessionStore: Sendable {
    /// Keeps session `id`, ending the holder's oldest past the limit.
    func start(_ id: String, _ session: WebUI.Session, at now: Duration) throws
    /// The caller session `id` stands for if it is live (counting a use), else nil.
    func caller(_ id: String, at now: Duration) throws -> APICaller?
    func end(_ id: String) throws
}

/// Sessions in this process's memory: an archive opened read-only cannot hold them. A token's session re-checks
/// its token on every request (`APICaller.presented`).
final class MemorySessions: SessionStore {
    private let table: Mutex<SessionTable>

    init(limits: WebUI.Limits) {
        table = Mutex(
            SessionTable(perHolder: limits.sessionsPerToken, idle: limits.sessionIdle, lifetime: limits.sessionLifetime))
    }

    func start(_ id: String, _ session: WebUI.Session, at now: Duration) {
        let holder: String
        switch session {
        case .token(let token, _): holder = "token " + token
        case .owner: holder = WebUI.ownerHolder
        }
        table.withLock { $0.insert(id, session, holder: holder, at: now) }
    }

    func caller(_ id: String, at now: Duration) -> APICaller? {
        switch table.withLock({ $0.use(id, at: now) }) {
        case .token(let token, _): .presented(token)
        case .owner(let record): .record(record, key: "session " + id)
        case nil: nil
        }
    }

    func end(_ id: String) {
        table.withLock { $0.remove(id) }
    }
}

/// Sessions in the archive (`WebSession`): a session made through one server works on every other over the same
/// archive, and revoking a token ends its sessions at once (the session reads its token back on every request). A
/// token's sessions share one rate limit bucket, named by the token's id (its secret is not kept).
struct ArchiveSessions: SessionStore {
    let archive: any TokenStore
    let limits: WebUI.Limits
    /// A use is written at most this often per session (or a quarter of the idle limit, when that is shorter): idle
    /// time is counted in hours, and a write on every request would make each page view a write on a shared
    /// database.
    static let touchEvery: Duration = .seconds(60)

    func start(_ id: String, _ session: WebUI.Session, at now: Duration) throws {
        let (record, owner): (APIToken, Bool) =
            switch session {
            case .token(_, let record): (record, false)
            case .owner(let record): (record, true)
            }
        let time = Self.milliseconds(now)
        try archive.startSession(
            id: id, for: record, owner: owner, at: time, perHolder: limits.sessionsPerToken,
            cutoff: SessionCutoff(
                idleBefore: time - Self.milliseconds(limits.sessionIdle),
                startedBefore: time - Self.milliseconds(limits.sessionLifetime)))
    }

    func caller(_ id: String, at now: Duration) throws -> APICaller? {
        guard let session = try archive.session(id: id) else { return nil }
        let time = Self.milliseconds(now)
        if time - session.lastUsed >= Self.milliseconds(limits.sessionIdle)
            || time - session.started >= Self.milliseconds(limits.sessionLifetime)
        {
            try? archive.endSession(id: id)
            return nil
        }
        // Best effort: a primary that does not answer (reads go on from a replica) must not end the session.
        if time - session.lastUsed >= Self.milliseconds(min(Self.touchEvery, limits.sessionIdle / 4)) {
            try? archive.touchSession(id: id, at: time)
        }
        return .record(session.token, key: session.isOwners ? "session " + id : "token #\(session.token.id)")
    }

    func end(_ id: String) throws {
        try archive.endSession(id: id)
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
