import Foundation
import PostgresNIO
import Synchronization

/// The PostgreSQL archive: one shared database that many processes read, reached through one connection
/// (`PostgresLink`); the second backend of the roles (`ArchiveStore`), selected by a `postgresql://` location.
///
/// Every import, sync, the directory, timelines, search, tokens and what `serve` reads work (docs/postgresql.md);
/// storing files and `check` throw `StoreError.notOnPostgreSQL` naming themselves (exit 1), never crash.
/// Only `Archive.init` names it.
package final class PostgresArchive: ArchiveStore {
    /// The location without its password: every message to the user shows this.
    package let path: String
    package let access: Archive.Access
    package let upgradedOnOpen: Bool
    let link: PostgresLink
    /// Conversations and users read last (`PostgresDirectoryCache`).
    let directory = PostgresDirectoryCache()
    /// The archive an import session writes for (`init(sessionOf:)`): its cache is cleared with this one's.
    private let owner: PostgresArchive?
    /// Listeners of `onMessageChanges`, called after each commit of this process's writes.
    let changeListeners = Mutex<[@Sendable ([Int64]) -> Void]>([])

    /// Connects to the database `location` names: read-write (creating or migrating the schema) or read-only (the
    /// schema must be there and current; nothing is created).
    ///
    /// - Throws: `StoreError.cannotOpen` (server down, wrong password, missing database: the host and database
    ///   named, never the password), `.noArchive`, `.needsUpgrade`, `.newerArchive`.
    /// - Parameter replica: a hot standby of the same database for reads (`PostgresLink`).
    package init(location: String, access: Archive.Access, replica: String? = nil) throws {
        guard let parsed = try PostgresLocation(location) else {
            throw StoreError.cannotOpen(path: location, reason: "it is not a PostgreSQL URL")
        }
        let standby = try replica.map { replica in
            guard let standby = try PostgresLocation(replica) else {
                throw StoreError.cannotOpen(
                    path: replica, reason: "a replica is named by a PostgreSQL URL (postgresql://USER@HOST:PORT/DATABASE)")
            }
            return standby
        }
        path = parsed.redacted
        self.access = access
        owner = nil
        link = try PostgresLink(parsed, maxConnections: Self.readConnections, replica: standby)
        do {
            if access == .readOnly {
                try PostgresSchema.checkCurrent(link)
                upgradedOnOpen = false
            } else {
                upgradedOnOpen = try PostgresSchema.migrate(link)
            }
        } catch let error as StoreError {
            if case .databaseFailed(_, let reason) = error {
                throw StoreError.cannotOpen(path: parsed.redacted, reason: reason)
            }
            throw error
        }
    }

    /// A second connection to `archive`'s database, for an import session: its transaction spans writes while
    /// `archive`'s own link serves reads. The schema is `archive`'s: nothing is checked or migrated.
    ///
    /// - Throws: `StoreError.cannotOpen` when the server refuses the second connection.
    init(sessionOf archive: PostgresArchive) throws {
        path = archive.path
        access = archive.access
        upgradedOnOpen = false
        owner = archive
        link = try PostgresLink(archive.link.location)
    }

    /// This process wrote users, conversations or workspaces: what `directory` holds is forgotten, here and in the
    /// archive this one writes for.
    func directoryChanged() {
        directory.clear()
        owner?.directory.clear()
    }

    /// Connections an archive opened by a command may hold at once: `serve`'s requests read side by side on them
    /// (its search threads, at least 2, and the handlers of pages); a command that makes one call at a time holds
    /// one. PostgreSQL's default `max_connections` is 100: ten servers of 8 fit with room for imports.
    static let readConnections = 8

    /// The error of an operation this backend does not have yet.
    func unavailable(_ operation: String) -> StoreError {
        .notOnPostgreSQL(operation: operation, path: path)
    }

    /// The database's size on disk (`pg_database_size`), 0 when it cannot be asked.
    package var fileSize: Int64 {
        (try? link.query("SELECT pg_database_size(current_database()) AS bytes").first?["bytes"].decode(Int64.self))
            ?? 0
    }

    /// Calls the listeners with the row ids of messages a commit of this process wrote.
    func notifyChanges(_ ids: [Int64]) {
        guard !ids.isEmpty else { return }
        for listener in changeListeners.withLock({ $0 }) { listener(ids) }
    }
}

extension PostgresRandomAccessRow {
    func int(_ column: String) throws -> Int64 { try self[column].decode(Int64.self) }
    func optionalInt(_ column: String) throws -> Int64? { try self[column].decode(Int64?.self) }
    func string(_ column: String) throws -> String { try self[column].decode(String.self) }
    func optionalString(_ column: String) throws -> String? { try self[column].decode(String?.self) }
    func bool(_ column: String) throws -> Bool { try self[column].decode(Bool.self) }
}

extension PostgresBindings {
    /// Bindings of these values, in order.
    static func of(_ values: any PostgresDynamicTypeEncodable...) -> PostgresBindings {
        var binds = PostgresBindings()
        for value in values { binds.append(value) }
        return binds
    }
}

// The operations this backend does not have yet: each throws one clear error. Files, avatars and custom emoji are
// not stored on PostgreSQL yet (`files fetch` says so), so what reads them finds nothing stored: pages show the
// files' names and links as Slack gave them, as on an SQLite archive whose files were never fetched.
extension PostgresArchive {
    // Maintenance
    package func storageProblems(limit: Int) throws -> [String] { throw unavailable("check") }
    package func walkStoredMessages(_ body: (StoredMessage) throws -> Void) throws -> RawBlockSummary {
        throw unavailable("check")
    }
    package func indexAgreement() throws -> IndexAgreement { throw unavailable("check") }
    package func indexDisagreements(limit: Int) throws -> [Int64] { throw unavailable("check") }
    package func indexDocumentMismatches(limit: Int) throws -> [Int64] { throw unavailable("check") }
    package func countMismatches() throws -> [CountMismatch] { throw unavailable("check") }
    package func replyCountShortfalls(limit: Int) throws -> (count: Int, examples: [String]) {
        throw unavailable("check")
    }
    package func attachmentProblems() throws -> [String: Int] { throw unavailable("check") }
    package func wordCountMismatches(limit: Int) throws -> (count: Int, examples: [String]) {
        throw unavailable("check")
    }
    package func recountWords() throws { throw unavailable("check --repair") }
    package func replicaStatus() -> ReplicaStatus? {
        link.standbyStatus().map { ReplicaStatus(answers: $0.answers, inRecovery: $0.inRecovery, lagSeconds: $0.lagSeconds) }
    }
    package func schemaVersion() throws -> String {
        try link.query("SELECT name FROM slackindex_migration ORDER BY applied_at DESC, name DESC LIMIT 1")
            .first?.string("name") ?? ""
    }
    /// Rebuilds every message's search vector from its stored search text, in one transaction.
    package func rebuildSearchIndex() throws { try link.transaction { try PostgresSchema.reindex(link) } }
    package func recountMessageCounts() throws { throw unavailable("check --repair") }
    package func refreshAllReplyCounts() throws { throw unavailable("check --repair") }
    package func repairAttachmentsAndBlocks(unreferencedBlocks: [Int64]) throws { throw unavailable("check --repair") }
    package func markForReimport(messageIDs: [Int64]) throws { throw unavailable("check --repair") }
    package func recountedMessageCounts() throws -> [Int64: [Int]] { throw unavailable("check") }
    package func keptMessageCounts() throws -> [Int64: [Int]] { throw unavailable("check") }
    /// Nil: a PostgreSQL row holds its JSON as text, never in packed blocks, so there is nothing to repack.
    package func repackOldBlocks(progress: (_ done: Int, _ total: Int) -> Void) throws -> RepackSummary? { nil }
    /// 0: PostgreSQL's autovacuum makes dead rows' space reusable, and only the operator's `VACUUM FULL` (which
    /// locks the tables) gives it back to the disk; `upgrade` leaves that to them.
    package func reclaimFreeSpace() throws -> Int64 { 0 }
    package func pageCount() throws -> Int { throw unavailable("page counts (tests)") }
    package func fileBytes() throws -> Int64 { fileSize }
    package func limitSizeForTesting(pages: Int?) throws { throw unavailable("size limits (tests)") }

    // FileArchive
    package func archivedFiles(_ selection: Archive.FileSelection) throws -> [ArchivedFile] { throw unavailable("files") }
    package func fileBlobs() throws -> [String: FileBlob] { [:] }
    package func fileBlob(id: String) throws -> FileBlob? { nil }
    package func visibleFileBlob(id: String, to token: APIToken) throws -> (blob: FileBlob, name: String?)? { nil }
    package func recordFileBlob(id: String, blob: FileBlob, now: Date) throws { throw unavailable("files") }
    package func indexFileText(fileID: String, text: String) throws -> Int { throw unavailable("files") }
    package func fileTextPending(fileID: String) throws -> Bool { false }
    package func storedFileTypes(messageIDs: [Int64]) throws -> [String: String] { [:] }
    package func indexedFileTexts(messageIDs: [Int64]) throws -> [Int64: [(id: String, name: String?, blob: FileBlob)]] {
        [:]
    }
    package func fileThumbs() throws -> [String: FileBlob] { [:] }
    package func recordFileThumb(id: String, url: String, blob: FileBlob) throws { throw unavailable("files") }
    package func goneThumbnails() throws -> [String: String] { [:] }
    package func recordGoneThumbnail(id: String, url: String) throws { throw unavailable("files") }
    package func visibleFileThumb(id: String, to token: APIToken) throws -> FileBlob? { nil }
    package func storedThumbnails(messageIDs: [Int64]) throws -> Set<String> { [] }
    package func storeCustomEmoji(_ emoji: [CustomEmoji]) throws -> Int { throw unavailable("custom emoji") }
    package func workspaceImages(_ kind: WorkspaceImage.Kind) throws -> [WorkspaceImage] {
        throw unavailable("avatars and custom emoji")
    }
    package func recordImageBlob(_ kind: WorkspaceImage.Kind, key: String, url: String, blob: FileBlob) throws {
        throw unavailable("avatars and custom emoji")
    }
    package func imageBlob(_ kind: WorkspaceImage.Kind, key: String) throws -> FileBlob? { nil }
    package func storedImages() throws -> StoredImages { StoredImages() }
}
