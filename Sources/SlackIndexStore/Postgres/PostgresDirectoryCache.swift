import Synchronization

/// The archive's conversations and users as read last, kept for `lifetime`: small reference tables that every page,
/// hit and token check reads whole (`PostgresArchive.allConversations`, `allUsers`).
///
/// Measured on the generated 1M export (1,005 users, 187 conversations): a history page took 4.0–4.4 ms on
/// PostgreSQL, most of it reading and decoding every user for the authors' names; a search read every conversation
/// and user again per hit list. This process's own writes clear the cache (`PostgresArchive.directoryChanged`);
/// another process's (a second `serve`, an import beside it) are seen within `lifetime`.
final class PostgresDirectoryCache: Sendable {
    typealias Conversations = [(conversation: Conversation, folder: String?)]
    typealias Users = [(user: User, teamID: String?, timeZone: String?)]

    private struct Held: Sendable {
        var conversations: (value: Conversations, at: ContinuousClock.Instant)?
        var users: (value: Users, at: ContinuousClock.Instant)?
        var names: (value: [String: String], at: ContinuousClock.Instant)?
        var listings: (value: [ConversationListing], at: ContinuousClock.Instant)?
    }

    /// How long a read stays in use: how late another process's rename or new user may show.
    static let lifetime: Duration = .seconds(1)
    private let held = Mutex(Held())

    func conversations(_ load: () throws -> Conversations) throws -> Conversations {
        try cached(\.conversations, load)
    }

    func users(_ load: () throws -> Users) throws -> Users {
        try cached(\.users, load)
    }

    func names(_ load: () throws -> [String: String]) throws -> [String: String] {
        try cached(\.names, load)
    }

    func listings(_ load: () throws -> [ConversationListing]) throws -> [ConversationListing] {
        try cached(\.listings, load)
    }

    /// Forgets everything (a write of this process changed users or conversations).
    func clear() {
        held.withLock { $0 = Held() }
    }

    private func cached<T: Sendable>(
        _ slot: any WritableKeyPath<Held, (value: T, at: ContinuousClock.Instant)?> & Sendable, _ load: () throws -> T
    ) throws -> T {
        let now = ContinuousClock.now
        if let kept = held.withLock({ $0[keyPath: slot] }), kept.at.duration(to: now) < Self.lifetime {
            return kept.value
        }
        let value = try load()
        held.withLock { $0[keyPath: slot] = (value, now) }
        return value
    }
}
