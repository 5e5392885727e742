import CSlackTokenizer
import Foundation
import GRDB
import Synchronization

/// The archive: one SQLite database in WAL mode, reached through a GRDB `DatabasePool`.
///
/// It owns the connection pool and every SQL statement of the product. Readers (search, history) run concurrently
/// with the one writer (import, sync), so searching keeps working during an import.
public final class Archive: Sendable {
    /// Where the database file is.
    public let path: String
    let pool: DatabasePool
    /// User names for timeline reads, with the `users_version` they were read at.
    let nameCache = Mutex<(version: String, names: [String: String])?>(nil)
    /// Installed by the first `onMessageChanges` call.
    let changeObserver = Mutex<MessageChangeObserver?>(nil)

    /// Opens (creating if needed) the archive at `path` and applies pending migrations.
    ///
    /// - Throws: `StoreError.cannotOpen` with the path and SQLite's reason.
    public init(path: String) throws {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "its folder could not be created (\(error))")
        }
        var config = Configuration()
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
            pool = try DatabasePool(path: path, configuration: config)
            // Most opens find the schema current: checking costs one read, migrating takes the write lock.
            if try !pool.read({ try Migrations.migrator.hasCompletedMigrations($0) }) {
                try Migrations.migrator.migrate(pool)
            }
            try Migrations.rebuildIndexIfTokenizerChanged(pool)
        } catch let error as DatabaseError {
            throw StoreError.cannotOpen(path: path, reason: error.message ?? "\(error.resultCode)")
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
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
    case conversationNotFound(String)
    case ambiguousConversation(String, candidates: [String])
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "Could not open the archive at \(path): \(reason). Check the path and that you may write there."
        case .conversationNotFound(let name):
            "No conversation called '\(name)' in the archive; names are channel names (with or without #) or ids."
        case .ambiguousConversation(let name, let candidates):
            "'\(name)' matches several conversations: \(candidates.joined(separator: ", ")). Use one of their ids."
        case .invalidArgument(let message):
            message
        }
    }
}
