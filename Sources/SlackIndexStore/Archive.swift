import Foundation

/// An opened archive: the one place that picks a backend for a location, and the library's handle on it.
///
/// Code above the store reaches the archive through its roles (`store`, an `ArchiveStore`: search index,
/// timelines, directory, tokens, import sink, sync state, maintenance), never through a backend's type. A
/// `postgresql://` (or `postgres://`) URL opens a PostgreSQL database (`PostgresArchive`); any other location is an
/// SQLite file (`SQLiteArchive`).
public final class Archive: Sendable {
    /// The backend, as the roles it plays.
    package let store: any ArchiveStore

    /// How an archive is opened.
    public enum Access: Sendable {
        /// Created if missing, migrated if older: for commands that write (import, sync, tokens).
        case readWrite
        /// Never written, created or migrated: for commands that only read (search, history, stats, serve
        /// `--read-only`). Works on a read-only file, folder or mount.
        case readOnly
    }

    /// Opens the archive at `path`: read-write (creating it if needed and applying pending migrations) or
    /// read-only (it must exist and be current).
    ///
    /// - Throws: `StoreError.cannotOpen` with the path and the reason; `.newerArchive` when a newer version
    ///   migrated it; for `.readOnly`, `.noArchive` when nothing is at `path` and `.needsUpgrade` when the archive
    ///   needs a migration.
    /// - Parameter replica: a PostgreSQL hot standby of `path`'s database for reads (`serve --replica`): reads go
    ///   there while it answers, writes to `path`; see `PostgresLink`. Only with a PostgreSQL `path`.
    public init(path: String, access: Access = .readWrite, replica: String? = nil) throws {
        if Archive.isDatabaseServer(path) {
            store = try PostgresArchive(location: path, access: access, replica: replica)
        } else if let replica {
            throw StoreError.cannotOpen(
                path: Archive.shownLocation(replica),
                reason: "a replica is a PostgreSQL hot standby, for an archive on PostgreSQL (--db postgresql://…)")
        } else {
            store = try SQLiteArchive(path: path, access: access)
        }
    }

    /// Whether `location` names a database server (a `postgresql://` or `postgres://` URL) rather than a file: the
    /// file system has nothing to say about it (no folder to create, no file to remove).
    public static func isDatabaseServer(_ location: String) -> Bool {
        PostgresLocation.isDatabaseURL(location)
    }

    /// `location` as it may be shown to people: a database URL without its password; a path unchanged.
    public static func shownLocation(_ location: String) -> String {
        PostgresLocation.redacted(location)
    }

    /// An archive over a backend that is already open (tests, a second backend's contract tests).
    package init(store: any ArchiveStore) {
        self.store = store
    }

    /// Where the archive is.
    public var path: String { store.path }
    /// How this archive was opened.
    public var access: Access { store.access }
    /// Size of the archive on disk, in bytes (for SQLite, the database and its WAL).
    public var fileSize: Int64 { store.fileSize }

    /// Turns off SQLite's memory statistics (a global mutex taken by every SQLite allocation, ~4% of an import's
    /// writer thread): for a program's start, before any thread uses SQLite. False when SQLite was in use already
    /// (nothing changes; the statistics cost time, not correctness). The command line does it first thing, and so do
    /// the benchmarks (to time what the command runs); public for any program that embeds the library.
    @discardableResult
    public static func disableSQLiteMemoryStatistics() -> Bool {
        SQLiteArchive.disableMemoryStatistics()
    }

    /// The default database location: `$SLACKINDEX_DB`, else `$XDG_DATA_HOME/slackindex/archive.sqlite`, else
    /// `~/.local/share/slackindex/archive.sqlite`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit = environment["SLACKINDEX_DB"], !explicit.isEmpty { return explicit }
        let dataHome: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            dataHome = xdg
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            dataHome = home + "/.local/share"
        }
        return dataHome + "/slackindex/archive.sqlite"
    }
}

// The library's public reads and token operations, for programs that embed it (GettingStarted.md).
extension Archive {
    /// The conversation with this Slack id, name (`#general`, `general`) or folder; with `allowingPrefix`, also
    /// the one conversation whose name starts so.
    ///
    /// - Throws: `StoreError.conversationNotFound` with the closest names, `.ambiguousConversation`.
    public func conversation(named reference: String, allowingPrefix: Bool = false) throws -> Conversation {
        try store.conversation(named: reference, allowingPrefix: allowingPrefix)
    }

    /// Every conversation, by name.
    public func conversations() throws -> [Conversation] { try store.conversations() }

    /// Counts for the archive, or for one conversation.
    public func stats(conversation: Conversation? = nil) throws -> ArchiveStats {
        try store.stats(conversation: conversation)
    }

    /// Page sequences that do not connect (an API dump or sync with pages missing).
    public func syncGaps() throws -> [SyncGap] { try store.syncGaps() }

    /// Makes a token for `userID` and returns it in plain text: the only time it exists outside its holder.
    public func createToken(userID: String, isAdmin: Bool = false, label: String? = nil, now: Date = Date())
        throws -> (token: String, record: APIToken)
    {
        try store.createToken(userID: userID, isAdmin: isAdmin, label: label, now: now)
    }

    /// The token's record when it is one of the archive's live tokens.
    public func verifyToken(_ token: String) throws -> APIToken? { try store.verifyToken(token) }

    /// Every live token, without its secret.
    public func tokens() throws -> [APIToken] { try store.tokens() }

    /// Ends a token: its requests and sessions are refused from now on.
    public func revokeToken(id: Int64) throws { try store.revokeToken(id: id) }
}

// What `Benchmarks/` measures (it sees only public and SPI declarations).
extension Archive {
    /// A history page, as `Timeline` reads it.
    @_spi(Benchmarks) public func historyPage(
        conversation: Conversation, direction: PageDirection, from position: TimelinePosition?, limit: Int
    ) throws -> [Message] {
        try store.page(conversation: conversation, direction: direction, from: position, limit: limit)
    }

    /// A page by OFFSET (the baseline keyset pages are measured against).
    @_spi(Benchmarks) public func offsetPage(conversation: Conversation, offset: Int, limit: Int) throws -> [Message] {
        try store.offsetPage(conversation: conversation, offset: offset, limit: limit)
    }

    /// The archive's bytes after a checkpoint.
    @_spi(Benchmarks) public func fileBytes() throws -> Int64 { try store.fileBytes() }
}
