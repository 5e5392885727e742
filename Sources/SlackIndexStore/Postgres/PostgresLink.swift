import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// Connections to a PostgreSQL server, used through blocking calls: the roles are synchronous (the SQLite store
/// is), PostgresNIO is asynchronous.
///
/// How the bridge is built, and why it is safe from Swift's concurrency pool (`serve`'s handlers call the roles from
/// cooperative threads):
/// - The connections live on an event loop group of the link's own (one NIO thread), never on the caller's thread.
/// - Each call runs PostgresNIO's async API in a `Task` whose executor preference is `PostgresLinkExecutor`, a
///   dispatch queue of the link's own; the caller blocks on a semaphore until that task is done. So the work never
///   needs a thread of the cooperative pool: a caller blocking a cooperative thread (as GRDB's reads do) cannot
///   starve the task it waits for, however many callers block at once. (`EventLoopFuture.wait()` alone would be as
///   safe, but COPY FROM is async-only in PostgresNIO 1.33, and one bridge for every call keeps one rule.)
/// - A pool: a statement takes an idle connection, or opens one while fewer than `maxConnections` are open, or
///   waits for one. So `serve`'s requests read side by side, and a command that makes one call at a time holds one
///   connection. A transaction (`transaction`, or `begin` … `commit`) keeps its connection for the calling thread
///   until it ends: every statement that thread makes meanwhile is inside it, and no other caller's lands there.
/// - Reconnecting: a connection found closed (the server restarted, an administrator ended it, the network
///   dropped it) is let go; a statement outside a transaction is tried once more on a new connection, so `serve`
///   answers again as soon as the server does. Inside a transaction the error is thrown: the transaction is gone.
/// - A hot standby (`replica`): statements that only read (`Route.of`) go to a second pool on the standby, those
///   that write and every statement of a transaction to the primary. A standby that does not answer is left for
///   `standbyRest` and its reads go to the primary; a primary that does not answer sends reads to the standby and
///   refuses writes with `StoreError.primaryUnavailable`, until it answers again or the standby is promoted: the
///   link then takes the promoted server as its primary (`followPromotedStandby`), without a restart.
final class PostgresLink: @unchecked Sendable {  // `idle`, `open`, `pinned`, `primary`… are used only under `state`
    private let group: MultiThreadedEventLoopGroup
    private let executor = PostgresLinkExecutor()
    private let logger = Logger(label: "slackindex.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    /// The server this pool connects to (the promoted standby's, once one was followed) and its location.
    private var primary: (configuration: PostgresConnection.Configuration, location: PostgresLocation)
    /// Counts the primaries followed: a connection opened to an earlier one is let go when it comes back.
    private var generation = 0
    private var generations: [ObjectIdentifier: Int] = [:]
    /// The hot standby's pool, when there is one (`serve --replica`), and until when it is left alone after it
    /// failed to answer.
    private let standby: PostgresLink?
    private var standbyResting: ContinuousClock.Instant?
    /// How long a standby that did not answer is left before reads try it again.
    static let standbyRest: Duration = .seconds(5)
    /// Connections open at most.
    let maxConnections: Int
    /// Whether a statement outside a transaction is tried again on a new connection when its connection was lost.
    /// Off for a link whose statements build one transaction without `begin` (an import's further writers):
    /// there a new connection would silently run outside it.
    private let reconnects: Bool
    private let state = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var connectionIDs = 0
    /// The connection of each thread inside a transaction, and how deep its nested transactions go.
    private var pinned: [pthread_t: (connection: PostgresConnection, depth: Int)] = [:]
    /// For messages: the server and database, never the password (the primary's: a promoted standby's once one
    /// was followed).
    var location: PostgresLocation { state.withLock { primary.location } }
    /// Whether reads may go elsewhere than writes (a standby), so that one may not see a write yet.
    var readsElsewhere: Bool { standby != nil }

    /// Connects and authenticates one connection (so that a wrong password or a missing database is said at once).
    ///
    /// - Parameters:
    ///   - maxConnections: connections the pool may open (1: every call waits for the one before it).
    ///   - reconnects: see `reconnects`.
    /// - Throws: `StoreError.cannotOpen` naming the host and database (never the password) with the server's reason.
    ///   - replica: a hot standby for reads (see the type's notes); it may be down now: it is tried when read from.
    init(
        _ location: PostgresLocation, maxConnections: Int = 1, reconnects: Bool = true,
        replica: PostgresLocation? = nil
    ) throws {
        self.maxConnections = max(1, maxConnections)
        self.reconnects = reconnects
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        primary = (Self.configuration(location), location)
        standby = try replica.map { try PostgresLink(standby: $0, maxConnections: maxConnections) }
        do {
            idle = [try connect()]
            open = 1
        } catch {
            try? group.syncShutdownGracefully()
            throw StoreError.cannotOpen(path: location.redacted, reason: PostgresLink.reason(error))
        }
    }

    /// A standby's pool: nothing is connected until it is read from.
    private init(standby location: PostgresLocation, maxConnections: Int) throws {
        self.maxConnections = max(1, maxConnections)
        reconnects = true
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        primary = (Self.configuration(location), location)
        standby = nil
    }

    private static func configuration(_ location: PostgresLocation) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    deinit {
        for connection in idle + pinned.values.map(\.connection) {
            if connection.isClosed { continue }
            try? (connection.close() as EventLoopFuture<Void>).wait()
        }
        try? group.syncShutdownGracefully()
    }

    /// Connections open now, and those checked out (running a statement or holding a transaction).
    /// - Complexity: O(1).
    var use: (open: Int, inUse: Int) {
        state.withLock { (open, open - idle.count) }
    }

    /// A new connection.
    private func connect() throws -> PostgresConnection {
        let (id, settings, made) = state.withLock {
            connectionIDs += 1
            return (connectionIDs, primary.configuration, generation)
        }
        let (eventLoop, logger) = (group.next(), logger)
        let connection = try Self.block(executor) {
            try await PostgresConnection.connect(on: eventLoop, configuration: settings, id: id, logger: logger)
        }
        state.withLock { generations[ObjectIdentifier(connection)] = made }
        return connection
    }

    /// Runs `body` on the link's executor and blocks the calling thread until it is done; with `watching`, stops
    /// waiting once that connection is closed. PostgresNIO was seen never to answer a statement sent on a connection
    /// the server had just ended (an import's writer and `serve` hung for good): the wait is checked every second.
    private static func block<T: Sendable>(
        _ executor: PostgresLinkExecutor, watching connection: PostgresConnection? = nil,
        _ body: @escaping @Sendable () async throws -> T
    ) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        Task(executorPreference: executor) {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        if let connection {
            while done.wait(timeout: .now() + 1) == .timedOut {
                if connection.isClosed, result.withLock({ $0 }) == nil { throw ConnectionLost() }
            }
        } else {
            done.wait()
        }
        guard let outcome = result.withLock({ $0 }) else { throw StoreError.invalidArgument("no result") }
        return try outcome.get()
    }

    /// A statement abandoned because its connection closed while it waited (`block`).
    struct ConnectionLost: Error, CustomStringConvertible {
        var description: String { "the connection to the server was lost" }
    }

    /// The calling thread's transaction connection, if it is in one.
    private var pinnedConnection: PostgresConnection? {
        state.withLock { pinned[pthread_self()]?.connection }
    }

    /// An idle connection, a new one while fewer than `maxConnections` are open, or the first one given back.
    private func checkOut() throws -> PostgresConnection {
        state.lock()
        while true {
            while idle.isEmpty && open >= maxConnections { state.wait() }
            guard let connection = idle.popLast() else { break }
            // Closed while idle (the server restarted or ended it): PostgresNIO was seen never to answer a query
            // sent on such a connection, so it is let go here, before any is.
            if connection.isClosed {
                open -= 1
                generations[ObjectIdentifier(connection)] = nil
                let _: EventLoopFuture<Void> = connection.close()
                continue
            }
            state.unlock()
            return connection
        }
        open += 1
        state.unlock()
        do {
            return try connect()
        } catch {
            state.withLock { open -= 1 }
            state.signal()
            throw error
        }
    }

    /// Gives `connection` back to the pool, or lets it go when it is closed.
    private func checkIn(_ connection: PostgresConnection) {
        let stale = state.withLock { generations[ObjectIdentifier(connection)] != generation }
        if connection.isClosed || stale {
            discard(connection)
            return
        }
        state.withLock { idle.append(connection) }
        state.signal()
    }

    /// Whether `error` says `connection` is gone: closed, lost on the client's side, or ended by the server (SQLSTATE
    /// class 57P: shut down, ended by an administrator; class 08: connection exceptions). Its close may reach
    /// `isClosed` only later, so the error is read too.
    private static func isLost(_ connection: PostgresConnection, _ error: any Error) -> Bool {
        if connection.isClosed || error is ConnectionLost { return true }
        guard let error = error as? PSQLError else { return false }
        if [.serverClosedConnection, .connectionError, .uncleanShutdown].contains(error.code) { return true }
        let state = error.serverInfo?[.sqlState] ?? ""
        return state.hasPrefix("57P") || state.hasPrefix("08")
    }

    /// Lets a lost connection go. Its close is started, not waited for: on a connection the server ended, waiting
    /// for it was seen to hang (PostgresNIO asks for the close before the connection is released).
    private func discard(_ connection: PostgresConnection) {
        let _: EventLoopFuture<Void> = connection.close()
        state.withLock {
            open -= 1
            generations[ObjectIdentifier(connection)] = nil
        }
        state.signal()
    }

    /// Runs `body` with the thread's transaction connection, or with a pooled one; outside a transaction, once more
    /// on a new connection when the first was found closed.
    ///
    /// - Throws: `Unanswered` when no connection could be made or it was lost again (or the server refused a write
    ///   as a standby), else `StoreError.databaseFailed` with the server's reason (never a bound value or the
    ///   password).
    private func using<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) throws -> T {
        do {
            if let connection = pinnedConnection {
                // A transaction's connection found closed: the transaction is gone, said at once.
                guard !connection.isClosed else { throw ConnectionLost() }
                return try Self.block(executor, watching: connection) { try await body(connection) }
            }
            for attempt in 0..<2 {
                let connection: PostgresConnection
                do { connection = try checkOut() } catch { throw Unanswered(reason: PostgresLink.reason(error)) }
                do {
                    let value = try Self.block(executor, watching: connection) { try await body(connection) }
                    checkIn(connection)
                    return value
                } catch {
                    let lost = Self.isLost(connection, error)
                    if lost { discard(connection) } else { checkIn(connection) }
                    if lost && reconnects && attempt == 0 { continue }
                    throw lost ? Unanswered(reason: PostgresLink.reason(error)) : error
                }
            }
            throw StoreError.invalidArgument("unreachable")
        } catch let error as Unanswered {
            throw error
        } catch let error as PSQLError where Self.sqlState(error) == "25006" {
            throw Unanswered(reason: PostgresLink.reason(error), refusedWrite: true)
        } catch let error as PSQLError {
            throw StoreError.databaseFailed(path: location.redacted, reason: PostgresLink.reason(error))
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.databaseFailed(path: location.redacted, reason: PostgresLink.reason(error))
        }
    }

    /// A server that could not be used: no connection, a connection lost twice, or a standby refusing a write
    /// (SQLSTATE 25006: the server is in recovery).
    private struct Unanswered: Error {
        var reason: String
        var refusedWrite = false
    }

    /// Where a statement goes when the link has a standby.
    enum Route: Sendable {
        /// The standby while it answers, else the primary.
        case reads
        /// The primary, always (writes, and a read that must see the latest writes).
        case primary

        /// `.reads` for a statement that only reads: it begins with `SELECT` and names nothing that writes or
        /// locks (`FOR UPDATE`/`FOR SHARE`, advisory locks, sequences). A statement the rule sends to the standby
        /// wrongly is refused there (25006) and run on the primary.
        static func of(_ sql: String) -> Route {
            guard sql.drop(while: \.isWhitespace).prefix(6).uppercased() == "SELECT" else { return .primary }
            let text = sql.lowercased()
            let writes = ["for update", "for share", "pg_advisory", "nextval(", "setval("]
            return writes.contains(where: text.contains) ? .primary : .reads
        }
    }

    /// Runs `body` on the link `route` picks (`Route`): reads on the standby while it answers, else on the
    /// primary; when the primary does not answer, a followed promotion (`followPromotedStandby`), a read on the
    /// standby, or `StoreError.primaryUnavailable` for a write. Inside a transaction, always the transaction's.
    private func routed<T>(_ route: Route, _ body: (PostgresLink) throws -> T) throws -> T {
        let inTransaction = pinnedConnection != nil
        if route == .reads, !inTransaction, let standby, standbyIsAwake() {
            do {
                return try body(standby)
            } catch let error as Unanswered {
                if !error.refusedWrite { restStandby() }
            }
        }
        do {
            return try body(self)
        } catch let error as Unanswered {
            guard !inTransaction, let standby else {
                throw StoreError.databaseFailed(path: location.redacted, reason: error.reason)
            }
            if followPromotedStandby() { return try told { try body(self) } }
            if route == .reads { return try told { try body(standby) } }
            throw StoreError.primaryUnavailable(path: location.redacted, reason: error.reason)
        }
    }

    /// `body`, with `Unanswered` told as `StoreError.databaseFailed`.
    private func told<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as Unanswered {
            throw StoreError.databaseFailed(path: location.redacted, reason: error.reason)
        }
    }

    private func standbyIsAwake() -> Bool {
        state.withLock { standbyResting.map { ContinuousClock.now >= $0 } ?? true }
    }

    private func restStandby() {
        state.withLock { standbyResting = ContinuousClock.now + Self.standbyRest }
    }

    /// Once the primary did not answer: whether the standby was promoted (it answers and is out of recovery). Then
    /// its server becomes this link's primary, and connections to the old one are let go (idle ones now, the
    /// others as they come back), so writes go on without a restart. The old primary, should it come back, is no
    /// longer used: the promoted server has taken writes it lacks.
    private func followPromotedStandby() -> Bool {
        guard let standby,
            let row = try? standby.query("SELECT pg_is_in_recovery() AS recovering", on: .primary).first,
            let recovering = try? row["recovering"].decode(Bool.self), !recovering
        else { return false }
        let promoted = standby.state.withLock { standby.primary }
        let stale = state.withLock { () -> [PostgresConnection] in
            primary = promoted
            generation += 1
            let stale = idle
            for connection in stale { generations[ObjectIdentifier(connection)] = nil }
            open -= stale.count
            idle = []
            return stale
        }
        for connection in stale { let _: EventLoopFuture<Void> = connection.close() }
        state.broadcast()
        return true
    }

    /// The standby's state, when the link has one: whether it answers as a standby, and how far its replay is
    /// behind (0 when it has replayed all it received; else the age of the last transaction it replayed).
    func standbyStatus() -> (answers: Bool, inRecovery: Bool, lagSeconds: Double?)? {
        guard let standby else { return nil }
        let sql = """
            SELECT pg_is_in_recovery() AS recovering,
                CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                    ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END AS lag
            """
        guard let row = try? standby.query(sql, on: .primary).first else { return (false, false, nil) }
        let recovering = (try? row["recovering"].decode(Bool.self)) ?? false
        return (true, recovering, try? row["lag"].decode(Double?.self))
    }

    /// Runs one statement with bound values and returns its rows, where `route` says (by default `Route.of` the
    /// statement).
    ///
    /// - Throws: `StoreError.databaseFailed` with the server's message (never a bound value);
    ///   `StoreError.primaryUnavailable` for a write while the primary does not answer (with a standby).
    @discardableResult
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), on route: Route? = nil) throws
        -> [PostgresRandomAccessRow]
    {
        let logger = logger
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        // Without a standby every statement goes to the primary: the statement is not read for its route (an
        // import sends thousands).
        return try routed(route ?? (standby == nil ? .primary : Route.of(sql))) { link in
            try link.using { connection in
                try await connection.query(query, logger: logger).collect().map { $0.makeRandomAccess() }
            }
        }
    }

    /// Runs statements without bound values (DDL, BEGIN/COMMIT), one after the other.
    func execute(_ statements: String...) throws {
        for sql in statements { try query(sql) }
    }

    /// Streams `text` (PostgreSQL's COPY text format: tab-separated, `\N` for NULL, one row a line) into `table`.
    func copy(into table: String, columns: [String], text: ByteBuffer) throws {
        let logger = logger
        try routed(.primary) { link in
            try link.using { connection in
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    try await writer.write(text)
                }
            }
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws. The calling thread
    /// keeps the transaction's connection meanwhile, so every statement of `body` is inside it.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try begin()
        do {
            let value = try body()
            try commit()
            return value
        } catch {
            rollback()
            throw error
        }
    }

    /// Starts a transaction that spans calls (a bulk import's session): the calling thread keeps a connection until
    /// `commit` or `rollback`, which the same thread must call. Nested calls share the outer transaction.
    func begin() throws {
        let me = pthread_self()
        if state.withLock({ () -> Bool in
            guard let held = pinned[me] else { return false }
            pinned[me] = (held.connection, held.depth + 1)
            return true
        }) {
            return
        }
        let connection: PostgresConnection
        do {
            connection = try checkOut()
        } catch {
            let reason = PostgresLink.reason(error)
            guard standby != nil else { throw StoreError.databaseFailed(path: location.redacted, reason: reason) }
            guard followPromotedStandby(), let promoted = try? checkOut() else {
                throw StoreError.primaryUnavailable(path: location.redacted, reason: reason)
            }
            connection = promoted
        }
        state.withLock { pinned[me] = (connection, 1) }
        do {
            try execute("BEGIN")
        } catch {
            try? release(commit: false)
            throw error
        }
    }

    /// Commits the transaction `begin` opened and gives its connection back (also when the commit fails: the
    /// server has then rolled it back).
    func commit() throws {
        try release(commit: true)
    }

    /// Rolls back the transaction `begin` opened and gives its connection back.
    func rollback() {
        try? release(commit: false)
    }

    /// Ends the thread's transaction when its outermost `begin` is matched.
    private func release(commit: Bool) throws {
        let me = pthread_self()
        let outermost = state.withLock { () -> PostgresConnection? in
            guard let held = pinned[me] else { return nil }
            if held.depth > 1 {
                pinned[me] = (held.connection, held.depth - 1)
                return nil
            }
            return held.connection
        }
        guard let connection = outermost else { return }
        defer {
            state.withLock { pinned[me] = nil }
            checkIn(connection)
        }
        if commit {
            try execute("COMMIT")
        } else {
            try? execute("ROLLBACK")
        }
    }

    /// The server's words for `error` (its message and SQLSTATE), or the client's for a connection failure; never a
    /// bound value or the password (PostgresNIO's own description hides everything, on purpose).
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return message + state
            }
            if let underlying = error.underlying {
                let text = "\(underlying)"
                // NIO's connection errors name every address tried; what a person needs is that nothing answered.
                if text.contains("Connection refused") { return "no server answers there (connection refused)" }
                if text.contains("timed out") || text.contains("Timeout") { return "the server did not answer in 10 s" }
                return text
            }
            if error.code == .serverClosedConnection || error.code == .connectionError {
                return "the connection to the server was lost (\(error.code))"
            }
            return "\(error.code)"
        }
        if let error = error as? StoreError { return error.description }
        return "\(error)"
    }

    /// The SQLSTATE of a server's error, when `error` is one.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}

/// The executor of `PostgresLink`'s tasks: a serial dispatch queue, outside Swift's cooperative pool (see
/// `PostgresLink`).
final class PostgresLinkExecutor: TaskExecutor, @unchecked Sendable {  // the queue is the only state; it is Sendable
    private let queue = DispatchQueue(label: "slackindex.postgres.link")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// A `postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE` location (or `postgres://`), the password also from
/// `PGPASSWORD`.
struct PostgresLocation: Sendable, Equatable {
    var user: String
    var password: String?
    var host: String
    var port: Int
    var database: String

    /// Whether `location` names a PostgreSQL database rather than a file.
    static func isDatabaseURL(_ location: String) -> Bool {
        location.hasPrefix("postgresql://") || location.hasPrefix("postgres://")
    }

    /// Parses `location`; nil when it is no PostgreSQL URL. The password of the URL wins over `PGPASSWORD`.
    ///
    /// - Throws: `StoreError.cannotOpen` (with the location redacted) when it is one but lacks a host or database.
    init?(_ location: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard Self.isDatabaseURL(location) else { return nil }
        let shown = Self.redacted(location)
        guard let components = URLComponents(string: location), let host = components.host, !host.isEmpty else {
            throw StoreError.cannotOpen(
                path: shown, reason: "it is not a PostgreSQL URL of the form postgresql://USER@HOST:PORT/DATABASE")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else {
            throw StoreError.cannotOpen(path: shown, reason: "the URL names no database (postgresql://USER@HOST:PORT/DATABASE)")
        }
        self.host = host
        port = components.port ?? 5432
        self.database = database.removingPercentEncoding ?? database
        user = components.user?.removingPercentEncoding ?? environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        let fromURL = components.password?.removingPercentEncoding
        password = fromURL ?? environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The location as shown to people: `postgresql://USER@HOST:PORT/DATABASE`, never a password.
    var redacted: String { "postgresql://\(user)@\(host):\(port)/\(database)" }

    /// `location` with any password taken out (`postgresql://alice@db:5432/x`), for any text a person may see;
    /// other locations unchanged.
    static func redacted(_ location: String) -> String {
        guard isDatabaseURL(location), let scheme = location.range(of: "://") else { return location }
        let rest = location[scheme.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { return location }
        let credentials = rest[..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return location }
        return String(location[..<scheme.upperBound]) + credentials[..<colon] + rest[at...]
    }
}
