import Foundation
import GRDB

/// An SQLite file another tool wrote, read only: an import source that is one (slackdump's `slackdump.sqlite`) reads
/// it through this, since the store alone opens SQLite files. The source keeps its own SQL over the other tool's
/// schema; this opens the file without changing it and hands back rows as plain values.
package struct ForeignSQLiteFile: Sendable {
    package let path: String
    private let queue: DatabaseQueue
    /// A copy made to read it (see `init`), removed when the last copy of this value goes.
    private let copy: TemporaryCopy?

    /// Opens `path` read-only. Where nothing may be created beside it (a read-only folder or mount), SQLite cannot
    /// make the `-shm` index a WAL-mode database needs: the file is opened immutable when its WAL is empty or
    /// absent, and otherwise read from a copy of it and its WAL in a temporary folder (issue 47's D10 refused such
    /// a slackdump archive as "not a slackdump archive database").
    ///
    /// - Throws: `ForeignSQLiteError.cannotOpen` with SQLite's reason, or why the copy failed.
    package init(path: String) throws {
        var config = Configuration()
        config.readonly = true
        var location = SQLiteArchive.readOnlyLocation(path)
        var copy: TemporaryCopy?
        if location == path, !Self.mayCreateBeside(path), Self.hasWAL(path) {
            do {
                let made = try TemporaryCopy(of: path)
                location = made.path
                copy = made
            } catch {
                throw ForeignSQLiteError.cannotOpen(
                    path: path, reason: "its folder is read-only and its write-ahead log could not be copied (\(error))")
            }
        }
        self.copy = copy
        self.path = path
        do {
            queue = try DatabaseQueue(path: location, configuration: config)
            // Opening is lazy: the first read tells whether the file is a database at all.
            _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
        } catch let error as DatabaseError {
            throw ForeignSQLiteError.cannotOpen(path: path, reason: error.message ?? "\(error.resultCode)")
        }
    }

    /// Whether the file at `path` starts like an SQLite database.
    package static func isSQLite(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        return head == Data("SQLite format 3\0".utf8)
    }

    /// The names of the file's tables and views, in capitals.
    package func tableNames() throws -> Set<String> {
        try read { db in
            try String.fetchSet(db, sql: "SELECT upper(name) FROM sqlite_master WHERE type IN ('table', 'view')")
        }
    }

    /// Every row `sql` selects.
    package func rows(_ sql: String) throws -> [[ForeignSQLiteValue]] {
        var rows: [[ForeignSQLiteValue]] = []
        try forEachRow(sql) { rows.append($0) }
        return rows
    }

    /// Calls `body` with each row `sql` selects, read through a cursor: memory stays at one row. What `body` throws
    /// is rethrown as it is (an import writing the rows may fail on its own archive: that is not this file's
    /// error).
    package func forEachRow(_ sql: String, _ body: ([ForeignSQLiteValue]) throws -> Void) throws {
        var bodyError: (any Error)?
        try read { db in
            let rows = try Row.fetchCursor(db, sql: sql)
            while let row = try rows.next() {
                do {
                    try body(row.databaseValues.map(ForeignSQLiteValue.init))
                } catch {
                    bodyError = error
                    return
                }
            }
        }
        if let bodyError { throw bodyError }
    }

    /// Runs `body` in a read of the file; the file's errors become `ForeignSQLiteError.cannotRead`.
    private func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try queue.read(body)
        } catch let error as DatabaseError {
            throw ForeignSQLiteError.cannotRead(path: path, reason: error.message ?? "\(error.resultCode)")
        }
    }

    private static func mayCreateBeside(_ path: String) -> Bool {
        FileManager.default.isWritableFile(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    private static func hasWAL(_ path: String) -> Bool {
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        return size > 0
    }
}

/// A value of a row an `ForeignSQLiteFile` read.
package enum ForeignSQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let int): self = .integer(int)
        case .double(let double): self = .real(double)
        case .string(let string): self = .text(string)
        case .blob(let data): self = .blob(data)
        }
    }

    /// The bytes of a text or blob; nil otherwise.
    package var data: Data? {
        switch self {
        case .text(let text): Data(text.utf8)
        case .blob(let data): data
        default: nil
        }
    }

    /// A text, or a blob's bytes as UTF-8; nil otherwise.
    package var string: String? {
        switch self {
        case .text(let text): text
        case .blob(let data): String(decoding: data, as: UTF8.self)
        default: nil
        }
    }

    /// An integer; nil otherwise.
    package var int: Int? {
        if case .integer(let value) = self { return Int(value) }
        return nil
    }
}

/// Why an SQLite file of another tool cannot be read.
package enum ForeignSQLiteError: Error, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case cannotRead(path: String, reason: String)

    package var reason: String {
        switch self {
        case .cannotOpen(_, let reason), .cannotRead(_, let reason): reason
        }
    }

    package var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "\(path) cannot be opened as an SQLite database (\(reason))"
        case .cannotRead(let path, let reason): "\(path) cannot be read (\(reason))"
        }
    }
}

/// A copy of an SQLite file and its WAL in a temporary folder, removed with the last reference.
///
/// `@unchecked Sendable`: immutable after `init`; `deinit` runs once.
private final class TemporaryCopy: @unchecked Sendable {
    let folder: URL
    let path: String

    init(of source: String) throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("slackindex-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent(URL(fileURLWithPath: source).lastPathComponent).path
        do {
            try FileManager.default.copyItem(atPath: source, toPath: path)
            try FileManager.default.copyItem(atPath: source + "-wal", toPath: path + "-wal")
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    deinit { try? FileManager.default.removeItem(at: folder) }
}
