import CSlackTokenizer
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The SQLite archive: one database in WAL mode, reached through a GRDB `DatabasePool`; the embedded backend of
/// every role (`ArchiveStore`).
///
/// It owns the connection pool and every SQL statement of the product. Readers (search, history) run concurrently
/// with the one writer (import, sync), so searching keeps working during an import. Only `Archive.init` names it.
package final class SQLiteArchive: ArchiveStore {
    /// Where the database file is.
    package let path: String
    let pool: DatabasePool
    /// Opening applied migrations to an existing archive, re-indexed or packed its messages (the archive was written
    /// by an older version); false for a new archive.
    package let upgradedOnOpen: Bool
    /// How this archive was opened.
    package let access: Archive.Access
    /// User names for timeline reads, with the `users_version` they were read at.
    let nameCache = Mutex<(version: String, names: [String: String])?>(nil)
    /// Installed by the first `onMessageChanges` call.
    let changeObserver = Mutex<MessageChangeObserver?>(nil)

    /// Opens the archive at `path`: read-write (creating it if needed and applying pending migrations) or
    /// read-only (it must exist and be current).
    ///
    /// - Throws: `StoreError.cannotOpen` with the path and SQLite's reason; `.newerArchive` when a newer version
    ///   migrated it; for `.readOnly`, `.noArchive` when nothing is at `path` and `.needsUpgrade` when the archive
    ///   needs a migration.
    /// An export import that adds at least this many messages merges the search index after it
    /// (`mergeSearchIndex`); tests lower it.
    package let mergeIndexAfter: Int

    package init(path: String, access: Archive.Access = .readWrite, mergeIndexAfter: Int = 100_000) throws {
        self.path = path
        self.access = access
        self.mergeIndexAfter = mergeIndexAfter
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
                // Debian's SQLite maps at most 2 GiB (SQLITE_MAX_MMAP_SIZE): past that (the 10M archive is 5.4 GB)
                // pages are read. A 256 MiB page cache for readers instead of 32 MiB was tried at 10M: `bench
                // search` p99 37.2 → 34.3 ms for 1.2 → 1.7 GB of RSS; not kept.
                try db.execute(sql: "PRAGMA mmap_size = 4294967296")
            }
        }
        do {
            if access == .readOnly {
                pool = try DatabasePool(path: SQLiteArchive.readOnlyLocation(path), configuration: config)
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

    /// Size of the database and its WAL on disk, in bytes.
    package var fileSize: Int64 {
        var total: Int64 = 0
        for suffix in ["", "-wal"] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + suffix)
            total += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        }
        return total
    }

    /// See `Archive.disableSQLiteMemoryStatistics`.
    static func disableMemoryStatistics() -> Bool {
        slackindex_disable_sqlite_memory_statistics() == SQLITE_OK
    }
}
