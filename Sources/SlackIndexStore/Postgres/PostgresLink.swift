import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// One connection to a PostgreSQL server, used through blocking calls: the roles are synchronous (the SQLite store
/// is), PostgresNIO is asynchronous.
///
/// How the bridge is built, and why it is safe from Swift's concurrency pool (`serve`'s handlers call the roles from
/// cooperative threads):
/// - The connection lives on an event loop group of its own (one NIO thread), never on the caller's thread.
/// - Each call runs PostgresNIO's async API in a `Task` whose executor preference is `PostgresLinkExecutor`, a
///   serial dispatch queue of its own; the caller blocks on a semaphore until that task is done. So the work never
///   needs a thread of the cooperative pool: a caller blocking a cooperative thread (as GRDB's reads do) cannot
///   starve the task it waits for, however many callers block at once. (`EventLoopFuture.wait()` alone would be as
///   safe, but COPY FROM is async-only in PostgresNIO 1.33, and one bridge for every call keeps one rule.)
/// - Calls are serialized by a lock: one statement at a time on the connection. A transaction (`transaction`)
///   holds the lock from BEGIN to COMMIT, so no other caller's statement lands inside it.
///
/// Not a pool: `serve` on PostgreSQL answers one query at a time in this slice (issue 50 leaves pooling to later).
final class PostgresLink: @unchecked Sendable {  // `connection` is used only under `lock` (see above)
    private let group: MultiThreadedEventLoopGroup
    private let executor = PostgresLinkExecutor()
    private let connection: PostgresConnection
    private let lock = NSRecursiveLock()
    private let logger = Logger(label: "slackindex.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    /// For messages: the server and database, never the password.
    let location: PostgresLocation

    /// Connects and authenticates.
    ///
    /// - Throws: `StoreError.cannotOpen` naming the host and database (never the password) with the server's reason.
    init(_ location: PostgresLocation) throws {
        self.location = location
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        let eventLoop = group.next()
        let settings = configuration
        let logger = logger
        let executor = executor
        do {
            connection = try Self.block(executor) {
                try await PostgresConnection.connect(
                    on: eventLoop, configuration: settings, id: 1, logger: logger)
            }
        } catch {
            try? group.syncShutdownGracefully()
            throw StoreError.cannotOpen(path: location.redacted, reason: PostgresLink.reason(error))
        }
    }

    deinit {
        let connection = connection
        try? Self.block(executor) { try await connection.close() }
        try? group.syncShutdownGracefully()
    }

    /// Runs `body` on the link's executor and blocks the calling thread until it is done.
    private static func block<T: Sendable>(
        _ executor: PostgresLinkExecutor, _ body: @escaping @Sendable () async throws -> T
    ) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        Task(executorPreference: executor) {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        guard let outcome = result.withLock({ $0 }) else { throw StoreError.invalidArgument("no result") }
        return try outcome.get()
    }

    /// Runs one statement with bound values and returns its rows.
    ///
    /// - Throws: `StoreError.databaseFailed` with the server's message (never a bound value).
    @discardableResult
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> [PostgresRandomAccessRow] {
        let connection = connection
        let logger = logger
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        return try serialized {
            try Self.block(executor) {
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
        let connection = connection
        let logger = logger
        try serialized {
            try Self.block(executor) {
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    try await writer.write(text)
                }
            }
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws. Holds the link, so
    /// every statement of `body` is inside the transaction.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Starts a transaction that spans calls (a bulk import's session): holds the link until `commit` or
    /// `rollback`, which the same thread must call.
    func begin() throws {
        lock.lock()
        do {
            try execute("BEGIN")
        } catch {
            lock.unlock()
            throw error
        }
    }

    /// Commits the transaction `begin` opened and lets the link go (also when the commit fails: the server has
    /// then rolled it back).
    func commit() throws {
        defer { lock.unlock() }
        try execute("COMMIT")
    }

    /// Rolls back the transaction `begin` opened and lets the link go.
    func rollback() {
        defer { lock.unlock() }
        try? execute("ROLLBACK")
    }

    /// Holds the link for `body` (a lock that the same thread may take again: `transaction` calls `query`).
    func serialized<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            return try body()
        } catch let error as PSQLError {
            throw StoreError.databaseFailed(path: location.redacted, reason: PostgresLink.reason(error))
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
            if let underlying = error.underlying { return "\(underlying)" }
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
