import CSlackTokenizer
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The archive: one SQLite database in WAL mode, reached through a GRDB `DatabasePool`.
///
/// It owns the connection pool and every SQL statement of the product. Readers (search, history) run concurrently
/// with the one writer (import, sync), so searching keeps working during an import.
public final class Archive: Sendable {
    /// Where the database file is.
    public let path: String
    let pool: DatabasePool
    /// Opening applied migrations to an existing archive, re-indexed or packed its messages (the archive was written
    /// by an older version); false for a new archive.
    package let upgradedOnOpen: Bool
    /// User names for timeline reads, with the `users_version` they were read at.
    let nameCache = Mutex<(version: String, names: [String: String])?>(nil)
    /// Installed by the first `onMessageChanges` call.
    let changeObserver = Mutex<MessageChangeObserver?>(nil)

    /// How an archive is opened.
    public enum Access: Sendable {
        /// Created if missing, migrated if older: for commands that write (import, sync, tokens).
        case readWrite
        /// Never written, created or migrated: for commands that only read (search, history, stats, serve
        /// `--read-only`). Works on a read-only file, folder or mount.
        case readOnly
    }

    /// How this archive was opened.
    public let access: Access

    /// Turns off SQLite's memory statistics (a global mutex taken by every SQLite allocation, ~4% of an import's
    /// writer thread): for a program's start, before any thread uses SQLite. False when SQLite was in use already
    /// (nothing changes; the statistics cost time, not correctness). The command line does it first thing, and so do
    /// the benchmarks (to time what the command runs); public for any program that embeds the library.
    @discardableResult
    public static func disableSQLiteMemoryStatistics() -> Bool {
        slackindex_disable_sqlite_memory_statistics() == SQLITE_OK
    }

    /// Opens the archive at `path`: read-write (creating it if needed and applying pending migrations) or
    /// read-only (it must exist and be current).
    ///
    /// - Throws: `StoreError.cannotOpen` with the path and SQLite's reason; `.newerArchive` when a newer version
    ///   migrated it; for `.readOnly`, `.noArchive` when nothing is at `path` and `.needsUpgrade` when the archive
    ///   needs a migration.
    public init(path: String, access: Access = .readWrite) throws {
        self.path = path
        self.access = access
        if access == .readWrite {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw StoreError.cannotOpen(path: path, reason: "its folder could not be created (\(error))")
            }
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { throw StoreError.noArchive(path: path) }
        }
        var config = Configuration()
        config.readonly = access == .readOnly
        config.busyMode = .timeout(30)
        config.prepareDatabase { db in
            // 16 KiB pages: message rows are ~1.2 KB, so 4 KiB pages waste a fifth of the file. Only takes effect
            // when the database is created.
            try db.execute(sql: "PRAGMA page_size = 16384")
            // WAL + NORMAL is durable across application crashes; only a power loss can drop the last commits.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // The FTS index's tokenizer lives in C; every connection must know it before touching message_fts.
            let code = slackindex_register_tokenizer(db.sqliteConnection)
            guard code == 0 else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot register tokenizer")
            }
            try db.execute(sql: "PRAGMA cache_size = -32768")
            if db.configuration.readonly {
                // Readers map the file: pages come from the OS cache without a pread copy each (which was 45% of a
                // history page's time on 1M messages). The writer keeps pread, so an import's RSS stays its own.
                try db.execute(sql: "PRAGMA mmap_size = 4294967296")
            }
        }
        do {
            if access == .readOnly {
                pool = try DatabasePool(path: Archive.readOnlyLocation(path), configuration: config)
                // Unknown migrations first: a newer layout may lack what `isCurrent` reads.
                let (unknown, current) = try pool.read { db in
                    let (pending, unknown) = try Migrations.migrationState(db)
                    return (unknown, try unknown.isEmpty && Migrations.isCurrent(db, pending: pending))
                }
                guard unknown.isEmpty else { throw StoreError.newerArchive(path: path, migrations: unknown) }
                guard current else { throw StoreError.needsUpgrade(path: path) }
                upgradedOnOpen = false
                return
            }
            pool = try DatabasePool(path: path, configuration: config)
            // Most opens find the schema current: checking costs one read, migrating takes the write lock.
            let (pending, unknown, created) = try pool.read { db -> ([String], [String], Bool) in
                let state = try Migrations.migrationState(db)
                return (state.pending, state.unknown, try !db.tableExists("grdb_migrations"))
            }
            let current = pending.isEmpty
            // Neither migrated nor written by this version: it could misread what a newer one wrote, or undo it.
            // (Checked at open only; a tokenizer changed without a migration is not seen here.)
            guard unknown.isEmpty else { throw StoreError.newerArchive(path: path, migrations: unknown) }
            if !current { try Migrations.migrator.migrate(pool) }
            let reindexed = try Migrations.rebuildIndexIfTokenizerChanged(pool)
            let packed = try Migrations.packPendingRows(pool)
            // The index check (v14) alone changes nothing unless it finds the index stale (then `reindexed`);
            // the file table (v15) only adds a table.
            let relaid = pending.contains { $0 != Migrations.indexCheck && $0 != Migrations.fileBlobs }
            upgradedOnOpen = (relaid && !created) || reindexed || packed
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: error.message ?? "\(error.resultCode)")
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
    }

    /// What SQLite opens for a read-only archive: the path, or an `immutable` URI when nothing may be created
    /// beside the file (a read-only folder or mount, or a file this user may not write) and its WAL holds nothing.
    ///
    /// A WAL database needs its `-shm` index, which a reader creates: where it cannot, SQLite refuses to read
    /// ("attempt to write a readonly database"), and where it can but the file is not ours, it would leave `-wal`
    /// and `-shm` files behind. Immutable reads need neither (nobody can be writing an archive nobody may write).
    /// Debian's SQLite reads URI file names (compiled with SQLITE_USE_URI); elsewhere the plain path is used.
    static func readOnlyLocation(_ path: String) -> String {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let writable =
            FileManager.default.isWritableFile(atPath: path) && FileManager.default.isWritableFile(atPath: directory)
        var info = stat()
        let walIsEmpty = stat(path + "-wal", &info) != 0 || info.st_size == 0
        guard !writable, walIsEmpty, sqlite3_compileoption_used("USE_URI") == 1 else { return path }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let escaped = absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute
        return "file:\(escaped)?mode=ro&immutable=1"
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

    /// Size of the database and its WAL on disk, in bytes.
    public var fileSize: Int64 {
        var total: Int64 = 0
        for suffix in ["", "-wal"] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + suffix)
            total += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        }
        return total
    }
}

/// Errors of the store layer; `description` is what the user sees.
public enum StoreError: Error, CustomStringConvertible, Sendable {
    case cannotOpen(path: String, reason: String)
    /// A read-only command found no archive.
    case noArchive(path: String)
    /// A read-only command found an archive that a newer slackindex must migrate first.
    case needsUpgrade(path: String)
    /// The archive has migrations this version does not know: a newer slackindex wrote it.
    case newerArchive(path: String, migrations: [String])
    /// No conversation has that id or name; `closest` are the nearest names there are (for "did you mean").
    case conversationNotFound(String, closest: [String] = [])
    case ambiguousConversation(String, candidates: [String])
    case invalidArgument(String)
    /// A write to the archive failed (a full disk, an I/O error, a file that became read-only): what was committed
    /// before it stays.
    case writeFailed(path: String, reason: String, isDiskFull: Bool, freeBytes: Int64?)
    /// Another process held the archive's write lock for longer than the 30 s this one waits.
    case busy(path: String)
    /// SQLite found the archive's file damaged (or not an SQLite file at all).
    case damaged(path: String, reason: String)
    /// Any other failure SQLite reported for the archive, in its words after ours.
    case databaseFailed(path: String, reason: String)

    /// `error` told in the store's words when it is any of SQLite's errors, else nil: a command's last resort,
    /// so that no raw SQLite error reaches the user (issue 47).
    package static func told(_ error: any Error, path: String) -> StoreError? {
        if let failure = writeFailure(error, path: path) { return failure }
        guard let error = error as? DatabaseError else { return nil }
        let reason = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: return .busy(path: path)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: return .damaged(path: path, reason: reason)
        default: return .databaseFailed(path: path, reason: reason)
        }
    }

    /// `error` as `writeFailed` when it is SQLite's failure to write the archive at `path`, else nil.
    package static func writeFailure(_ error: any Error, path: String) -> StoreError? {
        if let failure = error as? BulkImportFailure {
            return .writeFailed(
                path: failure.path, reason: failure.reason, isDiskFull: failure.isDiskFull,
                freeBytes: failure.freeBytes)
        }
        guard let error = error as? DatabaseError else { return nil }
        switch error.resultCode {
        case .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CANTOPEN:
            return .writeFailed(
                path: path, reason: error.message ?? "\(error.resultCode)",
                isDiskFull: error.resultCode == .SQLITE_FULL, freeBytes: Archive.freeBytes(besides: path))
        default:
            return nil
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "Could not open the archive at \(path): \(reason). Check the path and that you may write there."
        case .noArchive(let path):
            "There is no archive at \(path). Import an export first (slackindex import EXPORT.zip), or pass --db "
                + "or $SLACKINDEX_DB to use another archive."
        case .needsUpgrade(let path):
            "The archive at \(path) was written by an older slackindex and needs an upgrade, which a read-only "
                + "command does not do. Run `slackindex upgrade` once (or any import or sync), where the file "
                + "and its folder are writable."
        case .newerArchive(let path, let migrations):
            "The archive at \(path) was written by a newer slackindex (it has changes this version does not know: "
                + "\(migrations.joined(separator: ", "))). Use that version or a later one; this one would misread "
                + "or undo what it wrote, so it opens nothing."
        case .conversationNotFound(let name, let closest):
            "No conversation called '\(name)' in the archive"
                + (closest.isEmpty ? "" : "; did you mean \(closest.joined(separator: ", "))?")
                + (closest.isEmpty ? "; names are channel names (with or without #) or ids." : "")
        case .ambiguousConversation(let name, let candidates):
            "'\(name)' matches several conversations: \(candidates.joined(separator: ", ")). Use one of their ids."
        case .invalidArgument(let message):
            message
        case .writeFailed(let path, let reason, let isDiskFull, let freeBytes):
            (isDiskFull
                ? "The disk holding the archive \(path) is full"
                    + (freeBytes.map { " (\(($0 + 999_999) / 1_000_000) MB free)" } ?? "")
                : "Writing to the archive \(path) failed (\(reason))")
                + ". What was committed before stays in the archive. Free some space (or fix the file's "
                + "permissions), then run the same command again."
        case .busy(let path):
            "Another process has been writing to the archive \(path) for over 30 s (an import, a sync or a serve "
                + "storing tokens). Wait for it to finish, then run this command again."
        case .damaged(let path, let reason):
            "The archive \(path) is damaged (SQLite: \(reason)). Run `slackindex check` to see what; "
                + "`slackindex check --repair` and the same import again rebuild what can be rebuilt."
        case .databaseFailed(let path, let reason):
            "The archive \(path) could not be used (SQLite: \(reason)). Run `slackindex check` to see whether "
                + "it is damaged."
        }
    }
}
