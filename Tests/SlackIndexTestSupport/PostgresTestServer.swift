import Foundation
import Synchronization

/// A throw-away PostgreSQL 15 cluster for the contract tests: `initdb` and `pg_ctl` from Debian's
/// `/usr/lib/postgresql/15/bin` in a temporary folder, trust authentication, listening on 127.0.0.1 on a free port;
/// run as an unprivileged user (`setpriv` to 65534) when the tests run as root, as PostgreSQL refuses root. Started
/// once per test process, on first use, and stopped when the process exits. Each test takes a database of its own
/// (`database()`), so tests run in parallel.
///
/// Without the binaries, or when the server does not start, `shared` is nil and `unavailableReason` says why: the
/// PostgreSQL tests are skipped with that note, unless `SLACKINDEX_REQUIRE_POSTGRES=1` (CI), where they fail.
final class PostgresTestServer: Sendable {
    static let binaries = "/usr/lib/postgresql/15/bin"
    let folder: URL
    let port: Int
    let user = "postgres"

    /// The server, started on first use; nil when it cannot be.
    static let shared: PostgresTestServer? = {
        do {
            let server = try PostgresTestServer()
            atexit { PostgresTestServer.shared?.stop() }
            return server
        } catch {
            started.withLock { $0 = "\(error)" }
            return nil
        }
    }()

    private static let started = Mutex<String?>(nil)

    /// Why there is no server (after `shared` was asked), for the skip note.
    static var unavailableReason: String {
        _ = shared
        return "no PostgreSQL 15 server could be started here: " + (started.withLock { $0 } ?? "unknown")
    }

    /// Whether the PostgreSQL tests run (a server started), else false with a note on stderr; fails the run instead
    /// when CI requires them.
    static var isAvailable: Bool {
        if shared != nil { return true }
        let note = "PostgreSQL tests skipped: \(unavailableReason)\n"
        FileHandle.standardError.write(Data(note.utf8))
        if ProcessInfo.processInfo.environment["SLACKINDEX_REQUIRE_POSTGRES"] == "1" {
            // Required (CI): enabled, so that the tests run and fail on the missing server.
            return true
        }
        return false
    }

    private init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binaries + "/initdb") else {
            throw ServerError("\(Self.binaries)/initdb is missing (Debian's postgresql-15)")
        }
        folder = URL(fileURLWithPath: "/tmp/slackindex-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if getuid() == 0 {
            // PostgreSQL will not run as root: the cluster belongs to nobody (65534).
            guard chown(folder.path, 65534, 65534) == 0 else { throw ServerError("cannot chown \(folder.path)") }
        }
        port = try Self.freePort()
        let data = folder.appendingPathComponent("data").path
        try Self.run(
            Self.binaries + "/initdb",
            ["-D", data, "--auth=trust", "-U", user, "--encoding=UTF8", "--locale=C.UTF-8"])
        try Self.run(
            Self.binaries + "/pg_ctl",
            [
                "-D", data, "-l", folder.appendingPathComponent("server.log").path, "-w", "-t", "60", "-o",
                "-c listen_addresses=127.0.0.1 -p \(port) -k \(folder.path) -c fsync=off -c max_connections=200",
                "start",
            ])
    }

    /// Stops the server and removes its folder.
    func stop() {
        try? Self.run(Self.binaries + "/pg_ctl", ["-D", folder.appendingPathComponent("data").path, "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(at: folder)
    }

    /// A new empty database; returns its URL (`postgresql://postgres@127.0.0.1:PORT/NAME`).
    func database() throws -> String {
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try Self.run(Self.binaries + "/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, name])
        return "postgresql://\(user)@127.0.0.1:\(port)/\(name)"
    }

    /// Runs a PostgreSQL program (as nobody when root) and waits for it; throws with its output when it fails.
    ///
    /// `posix_spawn` and `waitpid`, not `Process`: `pg_ctl start` leaves the server running, and Foundation's
    /// `Process.waitUntilExit` was seen to hang after it on Linux. Output goes to a file (a pipe would stay open in
    /// the server).
    static func run(_ program: String, _ arguments: [String]) throws {
        let log = "/tmp/slackindex-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        defer { unlink(log) }
        // In /tmp (`env -C`): a folder nobody may enter would make PostgreSQL's programs fail before they start.
        let argv =
            ["/usr/bin/env", "-C", "/tmp"]
            + (getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : [])
            + [program] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else { throw ServerError("cannot start \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw ServerError("\((program as NSString).lastPathComponent) failed (status \(status)): \(text)")
        }
    }

    /// A TCP port on 127.0.0.1 nothing listens on now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("no socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw ServerError("cannot bind a port") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw ServerError("cannot read the port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    struct ServerError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// A PostgreSQL 15 primary and a streaming hot standby of it (`pg_basebackup -R -X stream`), each on a free loopback
/// port in a temporary folder of its own, owned by nobody when the tests run as root: for the tests of `serve
/// --replica`, which stop the primary and promote the standby (so never the shared server). Stopped and removed by
/// `stop()`.
final class PostgresReplicaPair: Sendable {
    let folder: URL
    let primaryPort: Int
    let standbyPort: Int
    let user = "postgres"
    /// The database both hold (made on the primary before the standby was copied).
    let database = "archive"

    init() throws {
        let binaries = PostgresTestServer.binaries
        guard FileManager.default.isExecutableFile(atPath: binaries + "/pg_basebackup") else {
            throw PostgresTestServer.ServerError("\(binaries)/pg_basebackup is missing (Debian's postgresql-15)")
        }
        folder = URL(fileURLWithPath: "/tmp/slackindex-pgpair-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if getuid() == 0 {
            guard chown(folder.path, 65534, 65534) == 0 else { throw PostgresTestServer.ServerError("cannot chown") }
        }
        primaryPort = try PostgresTestServer.freePort()
        var standby = try PostgresTestServer.freePort()
        while standby == primaryPort { standby = try PostgresTestServer.freePort() }
        standbyPort = standby
        // initdb's pg_hba.conf lets replication connections from 127.0.0.1 in with --auth=trust. The copy asks for
        // an immediate checkpoint: the default, spread over checkpoint_completion_target, took 90 s of the test.
        try PostgresTestServer.run(
            binaries + "/initdb",
            ["-D", data("primary"), "--auth=trust", "-U", user, "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"])
        try start("primary", port: primaryPort)
        try PostgresTestServer.run(
            binaries + "/createdb", ["-h", "127.0.0.1", "-p", "\(primaryPort)", "-U", user, database])
        try PostgresTestServer.run(
            binaries + "/pg_basebackup",
            [
                "-h", "127.0.0.1", "-p", "\(primaryPort)", "-U", user, "-D", data("standby"), "-R", "-X", "stream",
                "--checkpoint=fast", "--no-sync",
            ])
        try start("standby", port: standbyPort)
    }

    var primaryURL: String { "postgresql://\(user)@127.0.0.1:\(primaryPort)/\(database)" }
    var standbyURL: String { "postgresql://\(user)@127.0.0.1:\(standbyPort)/\(database)" }

    private func data(_ name: String) -> String { folder.appendingPathComponent(name).path }

    private func start(_ name: String, port: Int) throws {
        try PostgresTestServer.run(
            PostgresTestServer.binaries + "/pg_ctl",
            [
                "-D", data(name), "-l", folder.appendingPathComponent("\(name).log").path, "-w", "-t", "60", "-o",
                "-c listen_addresses=127.0.0.1 -p \(port) -k \(folder.path) -c fsync=off", "start",
            ])
    }

    /// Stops the primary at once (as a crash would: `-m immediate`).
    func stopPrimary() throws {
        try PostgresTestServer.run(PostgresTestServer.binaries + "/pg_ctl", ["-D", data("primary"), "-m", "immediate", "stop"])
    }

    /// Promotes the standby to a primary and waits until it takes writes.
    func promoteStandby() throws {
        try PostgresTestServer.run(PostgresTestServer.binaries + "/pg_ctl", ["-D", data("standby"), "-w", "promote"])
    }

    /// Stops both servers (whichever still run) and removes the folder.
    func stop() {
        for name in ["primary", "standby"] {
            try? PostgresTestServer.run(PostgresTestServer.binaries + "/pg_ctl", ["-D", data(name), "-m", "immediate", "stop"])
        }
        try? FileManager.default.removeItem(at: folder)
    }
}
