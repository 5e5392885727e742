import Foundation
import GRDB

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
    /// An operation the archive's backend does not have yet (PostgreSQL: docs/postgresql.md).
    case notOnPostgreSQL(operation: String, path: String)
    /// A write while the PostgreSQL primary does not answer and its standby (`serve --replica`) is not promoted:
    /// reads go on from the standby.
    case primaryUnavailable(path: String, reason: String)

    /// `error` told in the store's words when it is any of SQLite's errors, else nil: a command's last resort,
    /// so that no raw SQLite error reaches the user (issue 47).
    package static func told(_ error: any Error, path: String) -> StoreError? {
        let path = PostgresLocation.redacted(path)
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
                isDiskFull: error.resultCode == .SQLITE_FULL, freeBytes: SQLiteArchive.freeBytes(besides: path))
        default:
            return nil
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            PostgresLocation.isDatabaseURL(path)
                ? "Could not open the archive at \(path): \(reason). "
                    + (reason.contains("SQLSTATE 42501")
                        ? "The first write (an import) creates the archive's tables: run it as a user who may create "
                            + "them (GRANT CREATE ON SCHEMA public TO the user), or let such a user run it once."
                        : "Check that the server runs, the database exists and the user may connect (a password "
                            + "from the URL or PGPASSWORD).")
                : "Could not open the archive at \(path): \(reason). Check the path and that you may write there."
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
            "'\(name)' matches several conversations: \(candidates.joined(separator: ", ")). Use one of their ids"
                + (candidates.contains { $0.contains("/#") } ? " or the workspace/#name shown." : ".")
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
            PostgresLocation.isDatabaseURL(path)
                ? "The archive \(path) could not be used (PostgreSQL: \(reason))."
                : "The archive \(path) could not be used (SQLite: \(reason)). Run `slackindex check` to see whether "
                    + "it is damaged."
        case .primaryUnavailable(let path, let reason):
            "The primary of the archive \(path) does not answer (\(reason)): reads go on from the replica, but "
                + "nothing can be written (sign-ins, sign-outs) until the primary answers again or the replica is "
                + "promoted (pg_ctl promote); then try again."
        case .notOnPostgreSQL(let operation, let path):
            "Not available on PostgreSQL yet: \(operation) (archive \(path)). Use an SQLite archive for it; "
                + "docs/postgresql.md lists what works."
        }
    }
}
