import Foundation

// The archive's roles: what the code above the store needs from a backend, named after those needs. The SQLite
// archive (`SQLiteArchive`) implements every one of them; a second backend implements the same protocols and passes
// the same contract tests (docs/backends.md). Code above the store holds these roles (or `ArchiveStore`, all of
// them) and never a backend's type: only `Archive.init` picks one.

/// What every role knows of its archive.
package protocol ArchiveRole: Sendable {
    /// Where the archive is (a file path, or a database URL without its password): for messages to the user.
    var path: String { get }
    /// The newest schema migration the archive holds, read from it: what `serve`'s `/healthz` reports, and proof
    /// that the archive answers.
    func schemaVersion() throws -> String
    /// The hot standby reads go to (`serve --replica`), nil without one: whether it answers as a standby and how
    /// far behind it is. `/healthz` reports it.
    func replicaStatus() -> ReplicaStatus?
}

extension ArchiveRole {
    package func replicaStatus() -> ReplicaStatus? { nil }
}

/// A hot standby's state, as `/healthz` reports it.
package struct ReplicaStatus: Sendable, Equatable {
    /// It answered just now.
    package var answers: Bool
    /// It is still a standby (false once promoted: the servers then write to it).
    package var inRecovery: Bool
    /// Seconds its replay is behind: 0 when it has replayed all it received, else the age of the last transaction
    /// it replayed; nil when unknown.
    package var lagSeconds: Double?
}

/// Full-text search: a resolved search prepared once, then its hits and its count from the same preparation.
package protocol SearchIndex: ArchiveRole {
    /// Compiles `search` for this index: its words, the candidate window, prefix expansion and ranking are the
    /// index's business. `notes` are sentences for the user about how it was read (a prefix cut to its most frequent
    /// words).
    func prepare(_ search: ResolvedSearch) throws -> any PreparedSearch
    /// How many messages hold each of `words` (index tokens); words the index does not have are left out.
    func messagesHolding(words: [String]) throws -> [String: Int]
    /// The index's words, for benchmarks and "did you mean": within `documents` messages each, most frequent first
    /// or in index order.
    func indexWords(documents: ClosedRange<Int>?, mostFrequentFirst: Bool, limit: Int) throws -> [String]
    /// The searchable text of the first message at or after `id` (benchmark samples).
    func searchText(atOrAfter id: MessageID) throws -> String?
}

extension SearchIndex {
    package func indexWords(documents: ClosedRange<Int>? = nil, mostFrequentFirst: Bool = false) throws -> [String] {
        try indexWords(documents: documents, mostFrequentFirst: mostFrequentFirst, limit: Int.max)
    }
    package func indexWords(documents: ClosedRange<Int>? = nil, limit: Int) throws -> [String] {
        try indexWords(documents: documents, mostFrequentFirst: false, limit: limit)
    }
    package func indexWords(mostFrequentFirst: Bool, limit: Int) throws -> [String] {
        try indexWords(documents: nil, mostFrequentFirst: mostFrequentFirst, limit: limit)
    }
}

/// A search compiled by its index: hits in any order and a capped count, without compiling it again.
package protocol PreparedSearch: Sendable {
    /// Sentences for the user about how the index read the search.
    var notes: [String] { get }
    /// Hits `offset ..< offset + limit` in `order`, each with a score where higher is better (relevance, or bm25
    /// negated for the date orders), and whether relevance was ranked among a window of the newest matches only.
    func hits(order: SearchOrder, offset: Int, limit: Int) throws -> RankedHits
    /// How many messages match, stopping at `cap` (nil: all).
    func count(cap: Int?) throws -> Int
    /// How many messages the index estimates match, without counting them; nil where the backend has no estimate
    /// (SQLite: its count walks the doclists, which costs less than PostgreSQL's visit of every match).
    func estimatedCount() throws -> Int?
    /// Whether `estimatedCount` gives an estimate (so that a count past a limit may stop there).
    var estimatesCounts: Bool { get }
}

extension PreparedSearch {
    package func estimatedCount() throws -> Int? { nil }
    package var estimatesCounts: Bool { false }
}

/// The order of a search's hits.
package enum SearchOrder: Sendable, Equatable {
    /// By relevance, ranked among the newest `window` matches at most (fewer with filters that read rows).
    case relevance(window: Int)
    case newest
    case oldest
}

/// Hits of a prepared search.
package struct RankedHits: Sendable {
    /// Messages with their scores, best first (or in date order).
    package var hits: [(message: Message, score: Double)]
    /// The relevance window, when more messages matched than it holds (ranked among the newest only).
    package var window: Int?
    /// How many messages match in all, when finding the hits walked every match (fewer matched than it asked
    /// for): the count then needs no walk of its own. Nil when matches were left unread.
    package var matches: Int?

    package init(hits: [(message: Message, score: Double)], window: Int? = nil, matches: Int? = nil) {
        self.hits = hits
        self.window = window
        self.matches = matches
    }
}

/// Conversations' messages in time order: keyset pages, threads, single messages and what changed.
package protocol Timelines: ArchiveRole {
    func page(
        conversation: Conversation, scope: Archive.PageScope, direction: Archive.PageDirection,
        from position: TimelinePosition?, limit: Int, includeDeleted: Bool
    ) throws -> [Message]
    func offsetPage(conversation: Conversation, offset: Int, limit: Int) throws -> [Message]
    func message(conversation: Conversation, tsKey: Int64) throws -> Message?
    func details(of rowIDs: [Int64]) throws -> [Int64: MessageDetails]
    func rawMessages(ids: [Int64]) throws -> [Int64: RawMessage]
    /// Every message row of a conversation (any scope, deleted ones too) with a ts key above `afterKey`, oldest
    /// first, at most `limit`: what a copy of the archive reads (keyset on the conversation's key).
    func storedRows(conversation: Conversation, after afterKey: Int64?, limit: Int) throws -> [StoredRow]
    func messageHandles(ids: [Int64]) throws -> [String]
    /// Calls `listener` with the row ids of messages written after each commit (the timeline cache's invalidation).
    func onMessageChanges(_ listener: @escaping @Sendable ([Int64]) -> Void)
    func locations(of rowIDs: [Int64]) throws -> [(conversation: Int64, tsKey: Int64, threadKey: Int64?)]
    func position(in conversation: Conversation, depth: Int) throws -> TimelinePosition?
    func timeRange(of conversation: Conversation?) throws -> (Int64, Int64)
    func messageSpan() throws -> (first: Int64, last: Int64)?
    func messageTimeBounds(conversations rowIDs: Set<Int64>) throws -> (first: Int64?, last: Int64?)
    func messageIDRange() throws -> ClosedRange<MessageID>?
}

extension Timelines {
    package func page(
        conversation: Conversation, scope: Archive.PageScope = .history, direction: Archive.PageDirection,
        from position: TimelinePosition?, limit: Int
    ) throws -> [Message] {
        try page(
            conversation: conversation, scope: scope, direction: direction, from: position, limit: limit,
            includeDeleted: false)
    }

    package func timeRange() throws -> (Int64, Int64) { try timeRange(of: nil) }
}

/// Who and where: conversations, users, workspaces, names, what a token may see, and the archive's counts.
/// A message row as a copy reads it: where it is, whether it was deleted, its flags.
package struct StoredRow: Sendable, Equatable {
    package var rowID: Int64
    package var tsKey: Int64
    package var isDeleted: Bool
    package var flags: MessageFlags

    package init(rowID: Int64, tsKey: Int64, isDeleted: Bool, flags: MessageFlags) {
        self.rowID = rowID
        self.tsKey = tsKey
        self.isDeleted = isDeleted
        self.flags = flags
    }
}

package protocol Directory: ArchiveRole {
    func conversation(named reference: String, allowingPrefix: Bool) throws -> Conversation
    func conversations() throws -> [Conversation]
    func conversations(matching name: String) throws -> [Conversation]
    func conversations(withNamePrefix prefix: String) throws -> [Conversation]
    func closestConversationNames(to name: String) throws -> [String]
    func conversationRowIDs() throws -> Set<Int64>
    /// The row ids of the conversations of the workspace with this team id (`--workspace`, `team_id`).
    func conversationRowIDs(workspace teamID: String) throws -> Set<Int64>
    func conversationSummaries() throws -> [ConversationSummary]
    func busiestConversations(limit: Int) throws -> [(Conversation, Int)]
    func busiestChannelNames(limit: Int) throws -> [String]
    func busiestPosterHandles(limit: Int) throws -> [String]
    func messageCountsByConversation() throws -> [Int64: Int]
    func users(matching name: String) throws -> [User]
    func users(withNamePrefix prefix: String) throws -> [User]
    func closestUserHandles(to name: String) throws -> [String]
    func handles(of ids: some Collection<String>) throws -> [String: String]
    func nameDirectory() throws -> NameDirectory
    func usersPage(after afterID: String?, limit: Int) throws -> [ArchivedUser]
    func archivedUser(id: String) throws -> ArchivedUser?
    func archivedUsers(ids: Set<String>) throws -> [String: ArchivedUser]
    /// Row ids of the DMs and group DMs `userID` is a member of.
    func directConversations(of userID: String) throws -> [Int64]
    /// DMs whose members are exactly `me` and `other` (or just `other`, when `me` is unknown).
    func directMessages(with other: String, me: String?) throws -> [Int64]
    func visibleConversation(id: String, to token: APIToken) throws -> ConversationListing?
    func visibleConversationRowIDs(to token: APIToken) throws -> Set<Int64>?
    func visibleConversations(
        to token: APIToken, kinds: Set<ConversationKind>, excludeArchived: Bool, after afterID: String?, limit: Int
    ) throws -> [ConversationListing]
    func workspace() throws -> WorkspaceInfo?
    func workspaces() throws -> [WorkspaceInfo]
    func stats(conversation: Conversation?) throws -> ArchiveStats
    /// Counts for one workspace: its conversations' messages and kinds, its team's users (`stats --workspace`).
    func stats(workspace: WorkspaceInfo) throws -> ArchiveStats
}

extension Directory {
    package func conversation(named reference: String) throws -> Conversation {
        try conversation(named: reference, allowingPrefix: false)
    }
    package func stats() throws -> ArchiveStats { try stats(conversation: nil) }
}

/// `serve`'s API tokens and web UI sessions: only their hashes are kept.
package protocol TokenStore: ArchiveRole {
    func createToken(userID: String, isAdmin: Bool, label: String?, now: Date) throws
        -> (token: String, record: APIToken)
    func verifyToken(_ token: String) throws -> APIToken?
    func tokens() throws -> [APIToken]
    func revokeToken(id: Int64) throws
    /// Web UI sessions, kept in the archive so that every `serve` over it knows them (`WebSession`).
    func startSession(
        id: String, for token: APIToken, owner: Bool, at now: Int64, perHolder: Int, cutoff: SessionCutoff
    ) throws
    func session(id: String) throws -> WebSession?
    func touchSession(id: String, at now: Int64) throws
    func endSession(id: String) throws
}

/// Where imports and syncs write: an export's listings, then one write session for every source.
package protocol ImportSink: ArchiveRole {
    func storeExportListings(teamID: String, users: [UserInput], conversations: [ConversationInput]) throws
        -> ExportListingsResult
    /// One write session for an import or a sync, whatever its source (an export's batches, a dump's or a sync's
    /// pages): `body` hands it work on the calling thread; the sink sizes the transactions (`plan.commitMessages`),
    /// checkpoints, and ends the session when `body` returns (the export's workspace domain, pending events, reply
    /// counts). When `body` throws, the open transaction rolls back; what was committed stays.
    ///
    /// - Throws: what `body` throws; a failed write as `BulkImportFailure` with what was committed.
    func importSession(_ plan: ImportPlan, _ body: (any ImportSession) throws -> Void) throws
    /// Messages to a transaction when the import does not set them: for an export's batches, and for pages
    /// (dumps, held in memory until written: fewer). The backend's own measure (`SQLiteArchive.commitMessages`).
    var commitMessages: (export: Int, pages: Int) { get }
    /// Work the sink wants done on the reader's thread, beside its writer, before the messages of one source file
    /// (`batch.messages[start...]`, in file order) or a page are handed over: SQLite packs their raw JSON into
    /// compressed blocks (`RawBlocks`), PostgreSQL keeps it as it is.
    func prepareForWrite(_ batch: inout ImportBatch, from start: Int)
    func prepareForWrite(_ page: inout PageWrite)
    /// Bytes the archive takes on disk (an import reports how much it grew before a write failed).
    var fileSize: Int64 { get }
    /// Users and conversations from listings; with `workspace`, the conversations are that workspace's. Outside an
    /// import session (inside one, `ImportSession.storeListings`).
    func storeListings(users: [UserInput], conversations: [ConversationInput], workspace: WorkspaceInput?) throws
        -> ListingCounts
    func storeNames(users: [String: String], conversations: [String: (name: String, kind: ConversationKind)]) throws
        -> NameCounts
    /// Creates the conversation if the archive does not have it (by Slack id), the conversation being
    /// `workspace`'s; returns whether it was added.
    func addConversationIfMissing(_ input: ConversationInput, workspace: WorkspaceInput?) throws -> Bool
    /// `error` as the sink's write failure (a full disk, an I/O error) with what was committed, else nil.
    func writeFailure(from error: any Error) -> BulkImportFailure?
    /// Runs `write`, turning the backend's write errors into `BulkImportFailure` with `committed`.
    func reportingFailure<T>(committed: WriteCounts, _ write: () throws -> T) throws -> T
}

extension ImportSink {
    package func addConversationIfMissing(_ input: ConversationInput) throws -> Bool {
        try addConversationIfMissing(input, workspace: nil)
    }

    package func storeListings(users: [UserInput], conversations: [ConversationInput]) throws -> ListingCounts {
        try storeListings(users: users, conversations: conversations, workspace: nil)
    }

    package func reportingFailure<T>(_ write: () throws -> T) throws -> T {
        try reportingFailure(committed: WriteCounts(), write)
    }
}

/// What users and conversations listings added or changed.
package typealias ListingCounts = (
    usersAdded: Int, conversationsAdded: Int, conversationsUpdated: Int, conversationsUnchanged: Int
)
/// What id → name maps added or named.
package typealias NameCounts = (
    placeholders: Int, conversationsAdded: Int, conversationsNamed: Int, conversationsUnchanged: Int
)

/// How an import session writes.
package struct ImportPlan: Sendable {
    /// The export whose batches the session writes (its workspace and conversations: the workspace's domain and
    /// the reply counts are settled when the session ends); nil for pages (dumps, syncs).
    package var export: ExportListingsResult?
    /// Messages to a transaction: the session commits after the write that reaches it (1: after every write, as a
    /// sync does, so that each page is durable with its sync progress); nil: the sink's own (`commitMessages`).
    package var commitMessages: Int?
    /// Connections that write messages at once, each taking its share of the conversations (`import --jobs`);
    /// only a backend that takes several writers uses more than one (PostgreSQL), SQLite has one writer.
    package var writers: Int

    package init(export: ExportListingsResult? = nil, commitMessages: Int? = nil, writers: Int = 1) {
        self.export = export
        self.commitMessages = commitMessages.map { max(1, $0) }
        self.writers = max(1, writers)
    }

    /// The messages to a transaction on `sink`.
    package func commitMessages(on sink: any ImportSink) -> Int {
        commitMessages ?? (export == nil ? sink.commitMessages.pages : sink.commitMessages.export)
    }
}

/// The one write session of an import or a sync (`ImportSink.importSession`): batches of an export, pages of a
/// dump or a sync, and the listings met on the way, in large transactions the sink sizes. Valid only inside the
/// session's body, on its thread.
package protocol ImportSession: AnyObject {
    /// The workspace's Slack domain, once the import has learned it (the first value set stays).
    var workspaceDomain: String? { get set }
    /// The import was stopped before its end (Ctrl-C): the session leaves out what only speeds later reads (the
    /// SQLite index merge), so that the stop is prompt.
    var isStopped: Bool { get set }
    /// Writes one export batch: placeholders, messages (upserted on conversation and ts), deletions; the parts of a
    /// split batch (`ImportBatch.continues`) go into one transaction, in order.
    func write(_ batch: ImportBatch) throws -> BatchWriteResult
    /// Writes pages (history, replies and event pages) with the same outcome as writing each in turn: messages
    /// upserted, deletions and reactions (kept until their message comes), spans and sync progress.
    func write(pages: [PageWrite]) throws -> WriteCounts
    /// Listings met on the way (a users file in a dump, a conversation first seen in a page): committed with what
    /// is open before it returns, so that reads see them.
    func storeListings(users: [UserInput], conversations: [ConversationInput], workspace: WorkspaceInput?) throws
        -> ListingCounts
    func storeNames(users: [String: String], conversations: [String: (name: String, kind: ConversationKind)]) throws
        -> NameCounts
    func addConversationIfMissing(_ input: ConversationInput, workspace: WorkspaceInput?) throws -> Bool
    /// Raises the thread parents' reply counts of these conversations to the replies held, when the session ends.
    func recountReplies(conversations rowIDs: [Int64])
}

/// Where each conversation's sync stands: runs, checkpoints, threads to revisit and gaps between pages.
package protocol SyncState: ArchiveRole {
    func syncRun(conversationRowID: Int64) throws -> SyncRun?
    func syncCheckpoint(conversationRowID: Int64) throws -> String?
    func syncThreads() throws -> [SyncThread]
    func dropSyncThread(conversationRowID: Int64, threadTS: String) throws
    func syncGaps() throws -> [SyncGap]
}

/// `check`, `upgrade` and the tests' size limits: finding damage and rebuilding what can be rebuilt.
package protocol Maintenance: ArchiveRole {
    /// The backend's own integrity check of its storage.
    func storageProblems(limit: Int) throws -> [String]
    func walkStoredMessages(_ body: (StoredMessage) throws -> Void) throws -> RawBlockSummary
    func indexAgreement() throws -> IndexAgreement
    func indexDisagreements(limit: Int) throws -> [Int64]
    func indexDocumentMismatches(limit: Int) throws -> [Int64]
    func countMismatches() throws -> [CountMismatch]
    func replyCountShortfalls(limit: Int) throws -> (count: Int, examples: [String])
    func attachmentProblems() throws -> [String: Int]
    /// Words whose kept count of messages (`message_word`) differs from the index's, and a few of them described.
    func wordCountMismatches(limit: Int) throws -> (count: Int, examples: [String])
    func rebuildSearchIndex() throws
    /// Counts the messages of each word of the index anew (`message_word`).
    func recountWords() throws
    func recountMessageCounts() throws
    func refreshAllReplyCounts() throws
    func repairAttachmentsAndBlocks(unreferencedBlocks: [Int64]) throws
    func markForReimport(messageIDs: [Int64]) throws
    func recountedMessageCounts() throws -> [Int64: [Int]]
    func keptMessageCounts() throws -> [Int64: [Int]]
    func repackOldBlocks(progress: (_ done: Int, _ total: Int) -> Void) throws -> RepackSummary?
    /// Returns the storage freed, in bytes.
    func reclaimFreeSpace() throws -> Int64
    func pageCount() throws -> Int
    /// The archive's bytes after a checkpoint (benchmarks: what an import leaves on disk).
    func fileBytes() throws -> Int64
    func limitSizeForTesting(pages: Int?) throws
}

/// The files fetched from Slack: which blob of the file store beside the archive holds each, who may read it, and
/// the words of text files in their messages' search entries.
package protocol FileArchive: ArchiveRole {
    func archivedFiles(_ selection: Archive.FileSelection) throws -> [ArchivedFile]
    func fileBlobs() throws -> [String: FileBlob]
    func fileBlob(id: String) throws -> FileBlob?
    /// The blob of a file whose conversation `token` may read; nil otherwise (never fetched, unknown, hidden).
    func visibleFileBlob(id: String, to token: APIToken) throws -> (blob: FileBlob, name: String?)?
    func recordFileBlob(id: String, blob: FileBlob, now: Date) throws
    /// Adds a text file's words to the search entries of the messages carrying it; returns how many changed.
    @discardableResult func indexFileText(fileID: String, text: String) throws -> Int
    func fileTextPending(fileID: String) throws -> Bool
    func storedFileTypes(messageIDs: [Int64]) throws -> [String: String]
    func indexedFileTexts(messageIDs: [Int64]) throws -> [Int64: [(id: String, name: String?, blob: FileBlob)]]
    /// Image files' thumbnails (Slack's `thumb_*`): every stored one, recording one, one for a reader allowed to
    /// read the file, and which files of some messages have one.
    func fileThumbs() throws -> [String: FileBlob]
    func recordFileThumb(id: String, url: String, blob: FileBlob) throws
    /// Thumbnails Slack answered 404 or 410 for (file id → URL), and recording one.
    func goneThumbnails() throws -> [String: String]
    func recordGoneThumbnail(id: String, url: String) throws
    func visibleFileThumb(id: String, to token: APIToken) throws -> FileBlob?
    func storedThumbnails(messageIDs: [Int64]) throws -> Set<String>
}

extension FileArchive {
    package func recordFileBlob(id: String, blob: FileBlob) throws { try recordFileBlob(id: id, blob: blob, now: Date()) }
    package func archivedFiles() throws -> [ArchivedFile] { try archivedFiles(Archive.FileSelection()) }
}

/// Workspace-wide images: members' avatars and custom emoji, their URLs at Slack and the blobs that hold them.
package protocol WorkspaceImages: ArchiveRole {
    /// Records `emoji.list`: new and changed names; returns how many.
    @discardableResult func storeCustomEmoji(_ emoji: [CustomEmoji]) throws -> Int
    /// Every avatar, or every custom emoji with an image (not aliases), with its blob when fetched.
    func workspaceImages(_ kind: WorkspaceImage.Kind) throws -> [WorkspaceImage]
    func recordImageBlob(_ kind: WorkspaceImage.Kind, key: String, url: String, blob: FileBlob) throws
    /// The stored blob of an avatar (by member id) or a custom emoji (by name, aliases followed).
    func imageBlob(_ kind: WorkspaceImage.Kind, key: String) throws -> FileBlob?
    /// The stored avatars and emoji, for a reader (the web UI).
    func storedImages() throws -> StoredImages
}

/// What `serve --metrics` reads at each scrape: counts the archive keeps or its database knows, never a scan of the
/// messages (a scrape every 15 s must not cost a `count(*)` over a million rows).
package protocol ArchiveGauges: ArchiveRole {
    /// The connections the archive holds to its database now.
    func connectionUse() -> ConnectionUse
    /// Messages stored and where sync stands.
    func archiveProgress() throws -> ArchiveProgress
}

/// The connections of an archive's pool.
package struct ConnectionUse: Sendable, Equatable {
    /// Connections open now; nil where the backend does not say (GRDB's pool of SQLite readers).
    package var open: Int?
    /// Connections running a statement or holding a transaction now; nil where the backend does not say.
    package var inUse: Int?
    /// Connections the pool may open.
    package var limit: Int

    package init(open: Int? = nil, inUse: Int? = nil, limit: Int) {
        self.open = open
        self.inUse = inUse
        self.limit = limit
    }
}

/// How far import and sync have brought the archive, as the archive's own bookkeeping says.
package struct ArchiveProgress: Sendable, Equatable {
    /// Messages stored: exact on SQLite (the kept `message_count`, deleted ones left out); on PostgreSQL the
    /// statistics collector's live rows of `message` (deleted ones included, a moment behind the last commit).
    package var messages: Int
    /// Conversations whose sync run stopped (or runs) in the middle of their history (`sync_run` rows).
    package var syncRunsOpen: Int
    /// Pages those runs have stored so far.
    package var syncRunPages: Int
    /// Threads whose replies sync has still to fetch.
    package var syncThreadsPending: Int
    /// The newest message time (seconds since the epoch) any finished sync run reached; nil before the first.
    package var newestSyncedSeconds: Double?

    package init(
        messages: Int, syncRunsOpen: Int = 0, syncRunPages: Int = 0, syncThreadsPending: Int = 0,
        newestSyncedSeconds: Double? = nil
    ) {
        self.messages = messages
        self.syncRunsOpen = syncRunsOpen
        self.syncRunPages = syncRunPages
        self.syncThreadsPending = syncThreadsPending
        self.newestSyncedSeconds = newestSyncedSeconds
    }
}

/// Every role: one opened archive, whatever its backend.
package protocol ArchiveStore: SearchIndex, Timelines, Directory, TokenStore, ImportSink, SyncState, Maintenance,
    FileArchive, WorkspaceImages, ArchiveGauges
{
    var access: Archive.Access { get }
    /// Opening migrated, re-indexed or packed an archive an older version wrote.
    var upgradedOnOpen: Bool { get }
}
