import Foundation
import NIOCore
import PostgresNIO
import Synchronization

/// Export imports into PostgreSQL: listings in one transaction, then the reader pipeline's batches through COPY.
extension PostgresArchive {
    /// Stores an export's workspace, users and conversations in one transaction.
    ///
    /// - Complexity: O(users + conversations) rows read and compared, the changed ones written.
    package func storeExportListings(
        teamID: String, users: [UserInput], conversations: [ConversationInput]
    ) throws -> ExportListingsResult {
        try reportingFailure {
            try link.transaction {
                var result = ExportListingsResult(teamID: teamID)
                let workspaceID = try upsertWorkspace(teamID: teamID, domain: nil)
                (result.usersAdded, result.usersUpdated) = try upsertUsers(users)
                for input in conversations {
                    let (rowID, outcome) = try upsertConversation(input, workspaceID: workspaceID)
                    if let folder = input.folder { result.rowIDsByFolder[folder] = rowID }
                    switch outcome {
                    case .added: result.conversationsAdded += 1
                    case .updated: result.conversationsUpdated += 1
                    case .unchanged: result.conversationsUnchanged += 1
                    }
                }
                let ids = Array(Set(result.rowIDsByFolder.values))
                result.preexisting = Set(
                    try link.query(
                        "SELECT DISTINCT conversation_id FROM message WHERE conversation_id = ANY($1)", .of(ids)
                    ).map { try $0.int("conversation_id") })
                return result
            }
        }
    }

    /// Stores users and conversations a dump or a sync listed, as `SQLiteArchive.storeListings` does: known members
    /// are kept when the listing has none; with `workspace`, the conversations are that workspace's.
    package func storeListings(users: [UserInput], conversations: [ConversationInput], workspace: WorkspaceInput?)
        throws -> ListingCounts
    {
        try reportingFailure {
            try link.transaction {
                let (usersAdded, _) = try upsertUsers(users)
                let workspaceID = try workspace.map { try upsertWorkspace(teamID: $0.teamID, domain: $0.domain) }
                var outcomes: [UpsertOutcome: Int] = [:]
                for var input in conversations {
                    if input.members.isEmpty,
                        let known = try link.query(
                            "SELECT members FROM conversation WHERE slack_id = $1", .of(input.slackID)
                        ).first,
                        let members = JSONText.strings(try known.string("members"))
                    {
                        input.members = members
                    }
                    outcomes[try upsertConversation(input, workspaceID: workspaceID).outcome, default: 0] += 1
                }
                return (
                    usersAdded, outcomes[.added, default: 0], outcomes[.updated, default: 0],
                    outcomes[.unchanged, default: 0]
                )
            }
        }
    }

    /// Names from id → name maps, as `SQLiteArchive.storeNames`: a conversation the archive lacks is created, one
    /// still named by its id takes the name; a user the archive lacks becomes a placeholder, a placeholder takes the
    /// handle; names an export, a listing or a sync gave are never changed.
    package func storeNames(
        users: [String: String], conversations: [String: (name: String, kind: ConversationKind)]
    ) throws -> NameCounts {
        defer { directoryChanged() }
        return try reportingFailure {
            try link.transaction {
                var placeholders = 0
                for (id, handle) in users.sorted(by: { $0.key < $1.key }) {
                    placeholders += try link.query(
                        """
                        INSERT INTO slack_user (id, handle, is_placeholder) VALUES ($1, $2, true)
                        ON CONFLICT (id) DO UPDATE SET handle = excluded.handle
                        WHERE slack_user.is_placeholder AND slack_user.handle IS DISTINCT FROM excluded.handle
                        RETURNING id
                        """, .of(id, handle)
                    ).count
                }
                var added = 0
                var named = 0
                var unchanged = 0
                for (id, entry) in conversations.sorted(by: { $0.key < $1.key }) {
                    let exists = try !link.query("SELECT 1 FROM conversation WHERE slack_id = $1", .of(id)).isEmpty
                    if !exists {
                        let input = ConversationInput(slackID: id, kind: entry.kind, name: entry.name)
                        _ = try upsertConversation(input, workspaceID: nil)
                        added += 1
                        continue
                    }
                    let renamed = try link.query(
                        """
                        UPDATE conversation SET name = $1
                        WHERE slack_id = $2 AND name = slack_id AND name IS DISTINCT FROM $1
                        RETURNING id
                        """, .of(entry.name, id)
                    ).count
                    named += renamed
                    unchanged += 1 - renamed
                }
                return (placeholders, added, named, unchanged)
            }
        }
    }

    /// Creates the conversation if the archive does not have it (by Slack id), the conversation being
    /// `workspace`'s; returns whether it was added.
    package func addConversationIfMissing(_ input: ConversationInput, workspace: WorkspaceInput?) throws -> Bool {
        try reportingFailure {
            try link.transaction {
                guard try link.query("SELECT 1 FROM conversation WHERE slack_id = $1", .of(input.slackID)).isEmpty
                else { return false }
                let workspaceID = try workspace.map { try upsertWorkspace(teamID: $0.teamID, domain: $0.domain) }
                _ = try upsertConversation(input, workspaceID: workspaceID)
                return true
            }
        }
    }

    /// The workspace's row id, created if missing; a known domain is recorded.
    func upsertWorkspace(teamID: String, domain: String?) throws -> Int64 {
        defer { directoryChanged() }
        var binds = PostgresBindings.of(teamID)
        binds.append(domain)
        let rows = try link.query(
            """
            INSERT INTO workspace (team_id, domain) VALUES ($1, $2)
            ON CONFLICT (team_id) DO UPDATE SET domain = coalesce(excluded.domain, workspace.domain)
            RETURNING id
            """, binds)
        return try rows.first?.int("id") ?? 0
    }

    /// Inserts or updates members as `SQLiteArchive.upsertUsers` does: a real record replaces a placeholder, a
    /// placeholder never replaces anyone. Returns (added, updated) real members.
    func upsertUsers(_ users: [UserInput]) throws -> (added: Int, updated: Int) {
        defer { directoryChanged() }
        let existing = Dictionary(
            try allUsers().map { ($0.user.id, $0) }, uniquingKeysWith: { first, _ in first })
        let placeholders = users.filter(\.isPlaceholder).map {
            User(
                id: $0.id, handle: $0.handle, realName: $0.realName, displayName: $0.displayName, isBot: $0.isBot,
                isPlaceholder: true)
        }
        _ = try insertPlaceholders(placeholders)
        var added = 0
        var updated = 0
        for user in users where !user.isPlaceholder {
            if let known = existing[user.id] {
                let names: [String?] = [
                    known.user.handle, known.user.realName, known.user.displayName, known.timeZone, known.teamID,
                ]
                let flags = [known.user.isBot, known.user.isDeleted, known.user.isPlaceholder]
                let same =
                    names == [user.handle, user.realName, user.displayName, user.timeZone, user.teamID]
                    && flags == [user.isBot, user.isDeleted, false]
                if same { continue }
                updated += 1
            } else {
                added += 1
            }
            var binds = PostgresBindings.of(user.id)
            binds.append(user.teamID)
            binds.append(user.handle)
            binds.append(user.realName)
            binds.append(user.displayName)
            binds.append(user.isBot)
            binds.append(user.isDeleted)
            binds.append(user.timeZone)
            try link.query(
                """
                INSERT INTO slack_user (id, team_id, handle, real_name, display_name, is_bot, is_deleted,
                    is_placeholder, time_zone)
                VALUES ($1, $2, $3, $4, $5, $6, $7, false, $8)
                ON CONFLICT (id) DO UPDATE SET team_id = excluded.team_id, handle = excluded.handle,
                    real_name = excluded.real_name, display_name = excluded.display_name, is_bot = excluded.is_bot,
                    is_deleted = excluded.is_deleted, is_placeholder = false, time_zone = excluded.time_zone
                """, binds)
        }
        return (added, updated)
    }

    /// Records users seen only in messages, never replacing a member; returns how many were new.
    func insertPlaceholders(_ users: [User]) throws -> Int {
        defer { directoryChanged() }
        guard !users.isEmpty else { return 0 }
        var binds = PostgresBindings.of(users.map(\.id), users.map(\.handle))
        binds.append(users.map { $0.realName ?? "" })
        binds.append(users.map { $0.displayName ?? "" })
        binds.append(users.map(\.isBot))
        return try link.query(
            """
            INSERT INTO slack_user (id, handle, real_name, display_name, is_bot, is_placeholder)
            SELECT id, handle, nullif(real_name, ''), nullif(display_name, ''), is_bot, true
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[])
                AS u(id, handle, real_name, display_name, is_bot)
            ON CONFLICT (id) DO NOTHING
            RETURNING id
            """, binds
        ).count
    }

    /// Inserts or updates a conversation keyed on its Slack id; returns its row id and what happened.
    func upsertConversation(_ c: ConversationInput, workspaceID: Int64?) throws -> (rowID: Int64, outcome: UpsertOutcome) {
        defer { directoryChanged() }
        let members = JSONText.array(c.members)
        let rows = try link.query(
            """
            SELECT id, kind, name, folder, created, topic, purpose, is_archived, members, workspace_id
            FROM conversation WHERE slack_id = $1
            """, .of(c.slackID))
        var binds = PostgresBindings.of(c.kind.rawValue, c.name)
        binds.append(c.folder)
        binds.append(c.created)
        binds.append(c.topic)
        binds.append(c.purpose)
        binds.append(c.isArchived)
        binds.append(members)
        binds.append(workspaceID)
        if let row = rows.first {
            let rowID = try row.int("id")
            let strings = [
                try row.optionalString("kind"), try row.optionalString("name"), try row.optionalString("folder"),
                try row.optionalString("topic"), try row.optionalString("purpose"), try row.optionalString("members"),
            ]
            let created = try row.optionalInt("created")
            let archived = try row.bool("is_archived")
            let workspace = try row.optionalInt("workspace_id")
            let same =
                strings == [c.kind.rawValue, c.name, c.folder, c.topic, c.purpose, members]
                && created == c.created && archived == c.isArchived
                && (workspaceID == nil || workspace == workspaceID)
            if same { return (rowID, .unchanged) }
            binds.append(rowID)
            try link.query(
                """
                UPDATE conversation SET kind = $1, name = $2, folder = coalesce($3, folder),
                    created = coalesce($4, created), topic = $5, purpose = $6, is_archived = $7, members = $8,
                    workspace_id = coalesce($9, workspace_id)
                WHERE id = $10
                """, binds)
            return (rowID, .updated)
        }
        binds.append(c.slackID)
        let inserted = try link.query(
            """
            INSERT INTO conversation (kind, name, folder, created, topic, purpose, is_archived, members, workspace_id,
                slack_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            RETURNING id
            """, binds)
        return (try inserted.first?.int("id") ?? 0, .added)
    }

    /// Messages an import session writes from which it analyzes the message table at its end.
    static let analyzeAfter = 10_000

    /// SQLite's sizes (`SQLiteArchive.commitMessages`), not yet measured on PostgreSQL.
    package var commitMessages: (export: Int, pages: Int) { (200_000, 20_000) }

    /// Encodes each message's COPY row (but its keys) on the reader's thread (`PreparedMessage.encodedRow`); the raw
    /// JSON goes to the server as it is (packed blocks would be inflated again to send them). Measured on the 1M
    /// export: the writer thread built these rows between its round trips to the server, with the machine 40% idle.
    package func prepareForWrite(_ batch: inout ImportBatch, from start: Int) {
        for index in start..<batch.messages.count { PostgresCopyRows.encode(&batch.messages[index]) }
    }

    package func prepareForWrite(_ page: inout PageWrite) {
        for index in page.messages.indices { PostgresCopyRows.encode(&page.messages[index]) }
    }

    /// Runs an import session: `body` hands the session export batches or a dump's pages, each sent through
    /// COPY into a temporary table, then one `INSERT … ON CONFLICT` upserts it on (conversation, ts). Transactions
    /// hold `plan.commitMessages` messages; committed ones stay when a later write fails (the import is idempotent
    /// and completes by running again). When `body` returns: the workspace's domain, pending deletions, reply
    /// counts. The session writes on a connection of its own (`init(sessionOf:)`): its transaction spans writes, and
    /// this archive's link stays free for the reads the importing thread makes meanwhile.
    ///
    /// - Throws: what `body` throws; a failed write as `BulkImportFailure` with what was committed.
    package func importSession(_ plan: ImportPlan, _ body: (any ImportSession) throws -> Void) throws {
        let writer = try reportingFailure { try PostgresArchive(sessionOf: self) }
        // Into an empty archive, in large transactions: the search index is built once at the end instead of row by
        // row (PostgreSQL's advice for bulk loads; the 1M export: 44.8 s loading plus 6.7 s building against 65.1 s
        // with the index kept, docs/postgresql.md). Built again at the end whatever happens, and by the next write
        // open after a kill.
        let deferIndex = try reportingFailure {
            guard plan.commitMessages(on: self) > 1 else { return false }
            return try writer.link.query("SELECT NOT EXISTS (SELECT 1 FROM message) AS empty").first?.bool("empty")
                ?? false
        }
        if deferIndex { try reportingFailure { try writer.link.execute("DROP INDEX IF EXISTS message_search") } }
        defer {
            if deferIndex {
                try? writer.link.execute(PostgresSchema.indexBuildMemory, PostgresSchema.searchIndex)
            }
        }
        let helpers = try reportingFailure { try (1..<plan.writers).map { _ in try PostgresLink(link.location, reconnects: false) } }
        let session = PostgresImportSession(
            writer: writer, owner: self, commitMessages: plan.commitMessages(on: self), helpers: helpers)
        do {
            try body(session)
            try session.commitIfOpen()
        } catch {
            session.rollbackIfOpen()
            if let failure = writeFailure(from: error, committed: session.committed) { throw failure }
            throw error
        }
        let touched = session.recount.union(plan.export.map { Array($0.rowIDsByFolder.values) } ?? []).sorted()
        try reportingFailure(committed: session.committed) {
            try writer.link.transaction {
                if let export = plan.export, let domain = session.workspaceDomain {
                    _ = try writer.upsertWorkspace(teamID: export.teamID, domain: domain)
                }
                try writer.applyPendingReactions()
                try writer.applyPendingDeletions()
                try writer.refreshReplyCounts(conversations: touched)
            }
            // Statistics for the planner at once, not when autovacuum comes by: right after the 1M import, before
            // it, common words' searches planned without them took 699 ms at p95 against 7 ms after `ANALYZE`
            // (0.4 s at 1M).
            if session.committed.added + session.committed.updated >= Self.analyzeAfter {
                try writer.link.execute("ANALYZE message")
            }
        }
    }

    /// Marks deleted the messages whose deletion arrived before them.
    func applyPendingDeletions() throws {
        try link.query(
            """
            WITH arrived AS (
                UPDATE message m SET is_deleted = true FROM pending_deletion p
                WHERE m.conversation_id = p.conversation_id AND m.ts_key = p.ts_key
                RETURNING m.conversation_id, m.ts_key
            )
            DELETE FROM pending_deletion p USING arrived a
            WHERE p.conversation_id = a.conversation_id AND p.ts_key = a.ts_key
            """)
    }

    /// Brings thread parents' reply counts up to the replies held (never down: an export's count may include
    /// replies not archived), as `SQLiteArchive.refreshReplyCounts`.
    ///
    /// - Complexity: O(replies of these conversations).
    func refreshReplyCounts(conversations: [Int64]) throws {
        guard !conversations.isEmpty else { return }
        let parent = MessageFlags.threadParent.rawValue
        try link.query(
            """
            UPDATE message p SET reply_count = r.replies, flags = p.flags | \(parent)
            FROM (
                SELECT conversation_id, thread_key, count(*) AS replies FROM message
                WHERE conversation_id = ANY($1) AND thread_key IS NOT NULL AND thread_key <> ts_key AND NOT is_deleted
                GROUP BY conversation_id, thread_key
            ) r
            WHERE p.conversation_id = r.conversation_id AND p.ts_key = r.thread_key AND p.reply_count < r.replies
                AND p.conversation_id = ANY($1)
            """, .of(conversations))
    }

    /// `error` as a `BulkImportFailure` when it is a failed write to the server (a connection lost, a full disk on
    /// the server, a constraint), with what was committed; nil for other errors.
    func writeFailure(from error: any Error, committed: WriteCounts) -> BulkImportFailure? {
        if let failure = error as? BulkImportFailure { return failure }
        let reason: String
        switch error {
        case StoreError.databaseFailed(_, let why): reason = why
        case let error as PSQLError: reason = PostgresLink.reason(error)
        default: return nil
        }
        // SQLSTATE 53100: disk_full on the server.
        return BulkImportFailure(
            committed: committed, path: path, isDiskFull: reason.contains("SQLSTATE 53100"), freeBytes: nil,
            reason: reason)
    }

    package func writeFailure(from error: any Error) -> BulkImportFailure? {
        writeFailure(from: error, committed: WriteCounts())
    }

    package func reportingFailure<T>(committed: WriteCounts, _ write: () throws -> T) throws -> T {
        do {
            return try write()
        } catch {
            if let failure = writeFailure(from: error, committed: committed) { throw failure }
            throw error
        }
    }
}

/// The writer side of a PostgreSQL import, valid only inside `PostgresArchive.importSession`'s body: export batches
/// and pages into transactions of `commitMessages` messages, on a connection of its own.
///
/// Not `Sendable`: it holds its link's transaction, on the thread that runs the body.
final class PostgresImportSession: ImportSession {
    /// The archive on the session's own connection: its transaction spans writes, and the archive's link stays free
    /// for the reads the importing thread makes meanwhile (names, a conversation just created).
    private let writer: PostgresArchive
    /// The archive the command opened: its change listeners hear of every commit.
    private let owner: PostgresArchive
    private var link: PostgresLink { writer.link }
    private let commitMessages: Int
    private var inTransaction = false
    private var pending = 0
    private var uncommitted = WriteCounts()
    private var uncommittedIDs: [Int64] = []
    private(set) var committed = WriteCounts()
    private var domain: String?
    var isStopped = false
    /// Conversations whose reply counts are raised when the session ends.
    private(set) var recount = Set<Int64>()
    /// The messages counted so far that later pages may hold again (as on SQLite: `RepeatedCopies`).
    private var copies = RepeatedCopies()

    /// Further connections that write messages beside the writer's (`ImportPlan.writers`), each with its own
    /// transaction begun and committed with the writer's. Used only by this session, from its thread or the load
    /// threads it waits for, so their statements go through `execute`, not the link's thread-held `begin`.
    private let helpers: [PostgresLink]

    init(writer: PostgresArchive, owner: PostgresArchive, commitMessages: Int, helpers: [PostgresLink] = []) {
        self.writer = writer
        self.owner = owner
        self.commitMessages = max(1, commitMessages)
        self.helpers = helpers
    }

    var workspaceDomain: String? {
        get { domain }
        set { domain = domain ?? newValue }
    }

    /// The columns COPY fills, in `PostgresCopyRows` order.
    static let columns = [
        "conversation_id", "ts_key", "id", "ts", "user_id", "username", "subtype", "thread_ts", "thread_key",
        "reply_count", "edited_ts", "edited_key", "flags", "text", "search_text", "search_extra", "raw", "hash",
        "reactions", "files", "search",
    ]

    /// Writes one batch: placeholders, messages upserted on (conversation, ts) where new or newer, deletions.
    /// Commits when the open transaction holds `commitMessages` messages and the batch is not a part with more
    /// to come (`ImportBatch.continues`).
    ///
    /// - Complexity: three round trips and one COPY per batch, plus one per collision second (rare).
    func write(_ batch: ImportBatch) throws -> BatchWriteResult {
        var result = BatchWriteResult()
        try beginIfNeeded()
        result.counts.placeholders = try writer.insertPlaceholders(batch.placeholders)
        let start = ContinuousClock.now
        var raws = PostgresRawReader(blocks: batch.rawBlocks)
        let plan = try upsert(batch.messages) { index in try raws.json(of: batch.messages[index]) }
        result.counts.add(plan.counts)
        if !plan.rows.isEmpty { result.indexSeconds = start.duration(to: .now).seconds }
        uncommitted.add(result.counts)
        try delete(batch.deletions.map { ($0.conversationRowID, $0.tsKey) })
        pending += batch.messages.count + batch.deletions.count
        if pending >= commitMessages && !batch.continues { try commitIfOpen() }
        return result
    }

    /// Writes pages into the open transaction with the outcome of writing each in turn, as SQLite does
    /// (`SQLiteArchive.write(pages:copies:in:)`): runs of pages without reaction events or sync progress have their
    /// messages written together in ts order (repeated copies counted once: `RepeatedCopies`), then their deletions
    /// and spans; a page with reactions or sync progress is written alone, in its place.
    func write(pages: [PageWrite]) throws -> WriteCounts {
        try beginIfNeeded()
        var counts = WriteCounts()
        var start = 0
        while start < pages.count {
            if pages[start].isOrdered {
                counts.add(try writeOrdered(pages[start]))
                start += 1
                continue
            }
            var end = start + 1
            while end < pages.count && !pages[end].isOrdered { end += 1 }
            counts.add(try writeInTimeOrder(Array(pages[start..<end])))
            start = end
        }
        uncommitted.add(counts)
        pending += pages.reduce(1) { $0 + $1.messages.count + $1.deletions.count }
        if pending >= commitMessages { try commitIfOpen() }
        return counts
    }

    /// One page whose order matters (reaction events, sync progress): its span, placeholders, messages, deletions,
    /// reactions and sync progress, as `SQLiteArchive.write(_:in:)`.
    private func writeOrdered(_ page: PageWrite) throws -> WriteCounts {
        try recordSpan(of: page)
        var counts = WriteCounts()
        counts.placeholders = try writer.insertPlaceholders(page.placeholders)
        var raws = PostgresRawReader(blocks: page.rawBlocks)
        for outcome in try upsert(page.messages, raw: { try raws.json(of: page.messages[$0]) }).outcomes {
            counts.count(outcome)
        }
        try delete(page.deletions.map { (page.conversationRowID, $0) })
        for event in page.reactions {
            if let id = try writer.react(
                conversationRowID: page.conversationRowID, tsKey: event.tsKey, name: event.name,
                userID: event.userID, added: event.added)
            {
                uncommittedIDs.append(id)
            }
        }
        if let sync = page.sync { try writer.record(sync, conversationRowID: page.conversationRowID) }
        return counts
    }

    /// A run of pages without reactions or sync progress: placeholders, every message in ts order, deletions,
    /// spans.
    private func writeInTimeOrder(_ pages: [PageWrite]) throws -> WriteCounts {
        var counts = WriteCounts()
        counts.placeholders = try writer.insertPlaceholders(pages.flatMap(\.placeholders))
        var order: [(key: Int64, page: Int, message: Int)] = []
        for (pageIndex, page) in pages.enumerated() {
            for (messageIndex, message) in page.messages.enumerated() {
                order.append((message.tsKey, pageIndex, messageIndex))
            }
        }
        order.sort { ($0.key, $0.page, $0.message) < ($1.key, $1.page, $1.message) }
        let messages = order.map { pages[$0.page].messages[$0.message] }
        var raws = pages.map { PostgresRawReader(blocks: $0.rawBlocks) }
        let plan = try upsert(messages) { index in try raws[order[index].page].json(of: messages[index]) }
        for (index, message) in messages.enumerated() {
            copies.count(
                plan.outcomes[index], conversation: message.conversationRowID, key: message.tsKey,
                comesTwice: RepeatedCopies.comesTwice(
                    key: message.tsKey, threadKey: message.threadKey, flags: message.flags),
                into: &counts)
        }
        try delete(pages.flatMap { page in page.deletions.map { (page.conversationRowID, $0) } })
        for page in pages { try recordSpan(of: page) }
        return counts
    }

    func storeListings(users: [UserInput], conversations: [ConversationInput], workspace: WorkspaceInput?) throws
        -> ListingCounts
    {
        try commitIfOpen()
        return try writer.storeListings(users: users, conversations: conversations, workspace: workspace)
    }

    func storeNames(users: [String: String], conversations: [String: (name: String, kind: ConversationKind)]) throws
        -> NameCounts
    {
        try commitIfOpen()
        return try writer.storeNames(users: users, conversations: conversations)
    }

    func addConversationIfMissing(_ input: ConversationInput, workspace: WorkspaceInput?) throws -> Bool {
        try commitIfOpen()
        return try writer.addConversationIfMissing(input, workspace: workspace)
    }

    func recountReplies(conversations rowIDs: [Int64]) { recount.formUnion(rowIDs) }

    /// The table each connection loads a batch's rows into before the upsert.
    private static let loadTable = """
        CREATE TEMPORARY TABLE IF NOT EXISTS message_load (LIKE message INCLUDING DEFAULTS) ON COMMIT DELETE ROWS
        """

    private func beginIfNeeded() throws {
        guard !inTransaction else { return }
        try link.begin()
        inTransaction = true
        try link.execute(Self.loadTable)
        do {
            for helper in helpers { try helper.execute("BEGIN", Self.loadTable) }
        } catch {
            rollbackIfOpen()
            throw error
        }
    }

    /// Sends `messages`' new and changed rows with COPY into the load table, then upserts them on (conversation,
    /// ts) where the version differs and its edit is not older; `raw(index)` is the JSON of `messages[index]`.
    private func upsert(_ messages: [PreparedMessage], raw: (Int) throws -> String) throws -> PostgresBatchPlan {
        let plan = try PostgresBatchPlan(messages, link: link)
        guard !plan.rows.isEmpty else { return plan }
        // Each connection's share: whole conversations (so no two transactions touch the same key); in each, the
        // rows of keys the archive lacked apart from the others.
        let links = [link] + helpers
        var shares = links.map { _ in PostgresLoadShare(capacity: plan.rows.count * 2_048 / links.count) }
        for (position, (index, id)) in plan.rows.enumerated() {
            let share = Int(UInt64(bitPattern: messages[index].conversationRowID) % UInt64(links.count))
            try shares[share].add(messages[index], id: id, raw: raw(index), isNew: plan.isNew[position])
        }
        let loaded = Mutex<[Result<[Int64], any Error>]>([])
        let others = DispatchGroup()
        for index in 1..<links.count where !shares[index].isEmpty {
            let (helper, share) = (links[index], shares[index])
            DispatchQueue.global().async(group: others) {
                let result = Result { try share.load(on: helper) }
                loaded.withLock { $0.append(result) }
            }
        }
        // The writer's own share on this thread, which holds its transaction.
        let own = Result { try shares[0].load(on: link) }
        others.wait()
        for result in [own] + loaded.withLock({ $0 }) { uncommittedIDs += try result.get() }
        return plan
    }

    /// COPY of `text` into the connection's load table, then the upsert on (conversation, ts) where the version
    /// differs and its edit is not older; returns the row ids written.
    static func load(_ text: ByteBuffer, on link: PostgresLink) throws -> [Int64] {
        try link.copy(into: "message_load", columns: columns, text: text)
        let assignments = columns.filter { !["conversation_id", "ts_key", "id"].contains($0) }
            .map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let written = try link.query(
            """
            INSERT INTO message (\(columns.joined(separator: ", ")))
            SELECT \(columns.joined(separator: ", ")) FROM message_load
            ON CONFLICT (conversation_id, ts_key) DO UPDATE SET \(assignments)
            WHERE excluded.edited_key >= message.edited_key AND excluded.hash <> message.hash
            RETURNING id
            """)
        try link.execute("TRUNCATE message_load")
        return try written.map { try $0.int("id") }
    }

    /// Marks the messages deleted, keeping the deletions of messages not stored yet (`pending_deletion`).
    private func delete(_ deletions: [(conversation: Int64, tsKey: Int64)]) throws {
        guard !deletions.isEmpty else { return }
        try link.query(
            """
            WITH d AS (SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS d(conversation_id, ts_key)),
            marked AS (
                UPDATE message m SET is_deleted = true FROM d
                WHERE m.conversation_id = d.conversation_id AND m.ts_key = d.ts_key
                RETURNING m.conversation_id, m.ts_key
            )
            INSERT INTO pending_deletion (conversation_id, ts_key)
            SELECT d.conversation_id, d.ts_key FROM d
            WHERE NOT EXISTS (SELECT 1 FROM marked WHERE marked.conversation_id = d.conversation_id
                AND marked.ts_key = d.ts_key)
            ON CONFLICT DO NOTHING
            """, .of(deletions.map(\.conversation), deletions.map(\.tsKey)))
    }

    /// Records a history page's span, for gap reports, and its conversation's newest message seen in a page (as
    /// `SQLiteArchive.recordPage`).
    private func recordSpan(of page: PageWrite) throws {
        guard let span = page.span else { return }
        var binds = PostgresBindings.of(page.conversationRowID, span.newest.key, span.oldestKey)
        binds.append(span.nextKey)
        try link.query(
            """
            INSERT INTO sync_page (conversation_id, newest_key, oldest_key, next_key) VALUES ($1, $2, $3, $4)
            ON CONFLICT (conversation_id, newest_key) DO UPDATE SET
                oldest_key = least(sync_page.oldest_key, excluded.oldest_key),
                next_key = coalesce(excluded.next_key, sync_page.next_key)
            """, binds)
        var state = PostgresBindings.of(page.conversationRowID, span.newest.string, span.newest.key)
        state.append(span.cursor)
        try link.query(
            """
            INSERT INTO sync_state (conversation_id, newest_ts, newest_key, last_cursor) VALUES ($1, $2, $3, $4)
            ON CONFLICT (conversation_id) DO UPDATE SET
                newest_ts = CASE WHEN excluded.newest_key > coalesce(sync_state.newest_key, 0) THEN excluded.newest_ts
                    ELSE sync_state.newest_ts END,
                newest_key = greatest(coalesce(sync_state.newest_key, 0), excluded.newest_key),
                last_cursor = coalesce(excluded.last_cursor, sync_state.last_cursor)
            """, state)
    }

    /// Commits the open transaction, if any.
    func commitIfOpen() throws {
        guard inTransaction else { return }
        do {
            // The helpers' shares first: a failure there leaves the writer's transaction to roll back with them.
            for helper in helpers { try helper.execute("COMMIT") }
        } catch {
            rollbackIfOpen()
            throw error
        }
        try link.commit()
        writer.directoryChanged()
        inTransaction = false
        pending = 0
        committed.add(uncommitted)
        uncommitted = WriteCounts()
        owner.notifyChanges(uncommittedIDs)
        uncommittedIDs = []
    }

    func rollbackIfOpen() {
        guard inTransaction else { return }
        for helper in helpers { try? helper.execute("ROLLBACK") }
        link.rollback()
        inTransaction = false
        uncommitted = WriteCounts()
        uncommittedIDs = []
    }
}

/// One connection's share of a batch: the rows of keys the archive lacked, sent with COPY straight into the message
/// table, and the others, through the load table and the upsert.
///
/// Measured on the generated 100k export (server statement times): COPY into the load table 1.79 s, the upsert from
/// it 1.48 s, its TRUNCATE 0.27 s; new rows need neither of the last two. Should another writer have stored one of
/// those keys since the batch was planned (two imports at once), the direct COPY fails on the primary key inside a
/// savepoint, which is rolled back, and the rows take the upsert's way.
struct PostgresLoadShare: Sendable {
    private var fresh: ByteBuffer
    private var freshIDs: [Int64] = []
    private var known: ByteBuffer

    init(capacity: Int) {
        fresh = ByteBufferAllocator().buffer(capacity: capacity)
        known = ByteBufferAllocator().buffer(capacity: 0)
    }

    var isEmpty: Bool { fresh.readableBytes == 0 && known.readableBytes == 0 }

    mutating func add(_ m: PreparedMessage, id: Int64, raw: String, isNew: Bool) throws {
        if isNew {
            try PostgresCopyRows.append(m, id: id, raw: raw, to: &fresh)
            freshIDs.append(id)
        } else {
            try PostgresCopyRows.append(m, id: id, raw: raw, to: &known)
        }
    }

    /// Writes the share on `link` (inside its transaction); returns the row ids written.
    func load(on link: PostgresLink) throws -> [Int64] {
        var written: [Int64] = []
        if fresh.readableBytes > 0 {
            try link.execute("SAVEPOINT direct_load")
            do {
                try link.copy(into: "message", columns: PostgresImportSession.columns, text: fresh)
                try link.execute("RELEASE SAVEPOINT direct_load")
                written = freshIDs
            } catch let error as StoreError {
                guard case .databaseFailed(_, let reason) = error, reason.contains("SQLSTATE 23505") else { throw error }
                try link.execute("ROLLBACK TO SAVEPOINT direct_load", "RELEASE SAVEPOINT direct_load")
                written = try PostgresImportSession.load(fresh, on: link)
            }
        }
        if known.readableBytes > 0 { written += try PostgresImportSession.load(known, on: link) }
        return written
    }
}

/// What one batch writes: each message's outcome against the archive and the batch before it, and the rows to
/// send (batch index, row id) for the added and updated ones.
///
/// The same rules as `MessageWriter.upsert`: a message new on (conversation, ts) is added with the id
/// `MessageID` prefers, or the next free one of its second (then after it) when another message holds that id;
/// a stored one is replaced only by a different version (hash) whose edit is not older; a later copy in the same
/// batch counts against the earlier one.
struct PostgresBatchPlan {
    /// Ids past a batch's last preferred id whose holders are read with it: a second's own ids and 63 more
    /// seconds' (where more than 1,024 messages share a second, SQLite's rule moves on to the next free id).
    static let idMargin: Int64 = MessageID.perSecond * 64

    var counts = WriteCounts()
    /// Each message's outcome, in order.
    var outcomes: [UpsertOutcome] = []
    var rows: [(index: Int, id: Int64)] = []
    /// For each of `rows`, whether its key was absent from the archive when the batch was planned (its row can be
    /// sent straight into the message table).
    var isNew: [Bool] = []

    init(_ messages: [PreparedMessage], link: PostgresLink) throws {
        guard !messages.isEmpty else { return }
        struct Key: Hashable {
            var conversation: Int64
            var tsKey: Int64
        }
        var stored: [Key: (id: Int64, hash: Int64, editedKey: Int64)] = [:]
        for row in try link.query(
            """
            SELECT m.conversation_id, m.ts_key, m.id, m.hash, m.edited_key
            FROM message m JOIN unnest($1::bigint[], $2::bigint[]) AS b(conversation_id, ts_key)
                ON m.conversation_id = b.conversation_id AND m.ts_key = b.ts_key
            """, .of(messages.map(\.conversationRowID), messages.map(\.tsKey)))
        {
            stored[Key(conversation: try row.int("conversation_id"), tsKey: try row.int("ts_key"))] =
                (try row.int("id"), try row.int("hash"), try row.int("edited_key"))
        }
        // The ids the new messages prefer, and every id the archive holds from the first second's start to a margin
        // past the last: one round trip (a batch is whole dates, so the range holds those dates' messages at most).
        let preferred = messages.map { MessageID(preferredFor: $0.tsKey).rawValue }
        let low = MessageID.second(of: messages.map(\.tsKey).min() ?? 0).lowerBound
        let high = (preferred.max() ?? 0) + Self.idMargin
        var taken = Set(
            try link.query("SELECT id FROM message WHERE id >= $1 AND id <= $2", .of(low, high)).map {
                try $0.int("id")
            })
        // The latest version of each key in this batch, by its place in `rows`.
        var place: [Key: Int] = [:]
        for (index, message) in messages.enumerated() {
            let key = Key(conversation: message.conversationRowID, tsKey: message.tsKey)
            if let current = stored[key] {
                if current.hash == message.hash || message.editedKey < current.editedKey {
                    counts.count(.unchanged)
                    outcomes.append(.unchanged)
                    continue
                }
                counts.count(.updated)
                outcomes.append(.updated)
                stored[key] = (current.id, message.hash, message.editedKey)
                if let at = place[key] {
                    rows[at] = (index, current.id)
                } else {
                    place[key] = rows.count
                    rows.append((index, current.id))
                    isNew.append(false)
                }
                continue
            }
            var id = preferred[index]
            if taken.contains(id) {
                let second = MessageID.second(of: message.tsKey)
                id =
                    (id...second.upperBound).first { !taken.contains($0) }
                    ?? second.first { !taken.contains($0) }
                    ?? ((second.upperBound + 1)...).prefix(Int(Self.idMargin - MessageID.perSecond)).first {
                        !taken.contains($0)
                    }
                    ?? id
                guard !taken.contains(id) else {
                    throw StoreError.invalidArgument("no free id for ts \(message.ts)")
                }
            }
            taken.insert(id)
            counts.count(.added)
            outcomes.append(.added)
            stored[key] = (id, message.hash, message.editedKey)
            place[key] = rows.count
            rows.append((index, id))
            isNew.append(true)
        }
    }
}

/// A batch's messages' JSON: inline, or read back from the batch's packed blocks (`RawBlocks`), each block
/// inflated once.
struct PostgresRawReader {
    let blocks: [[UInt8]]
    private var inflated: [Int: RawBlocks.Inflated] = [:]

    init(blocks: [[UInt8]]) { self.blocks = blocks }

    mutating func json(of m: PreparedMessage) throws -> String {
        guard let location = m.rawLocation else { return m.raw }
        let fields = RepeatedFields(text: m.text, ts: m.ts, userID: m.userID, threadTS: m.threadTS)
        if inflated[location.block] == nil, blocks.indices.contains(location.block) {
            inflated[location.block] = RawBlocks.inflate(blocks[location.block])
        }
        guard let block = inflated[location.block], let json = RawBlocks.slice(block, location, fields: fields) else {
            throw PackingError(ts: m.ts, block: location.block)
        }
        return json
    }
}

/// Rows in PostgreSQL's COPY text format.
enum PostgresCopyRows {
    /// Appends one message row in `PostgresImportSession.columns` order.
    static func append(_ m: PreparedMessage, id: Int64, raw: String, to out: inout ByteBuffer) throws {
        for key in [m.conversationRowID, m.tsKey, id] {
            out.writeString(String(key))
            out.writeInteger(UInt8(ascii: "\t"))
        }
        if let row = m.encodedRow, m.rawLocation == nil {
            out.writeBytes(row)
        } else {
            try appendTail(m, raw: raw, to: &out)
        }
    }

    /// Makes `m.encodedRow` (its JSON is inline; without a row the writer encodes it, and says what is wrong).
    static func encode(_ m: inout PreparedMessage) {
        guard m.rawLocation == nil else { return }
        var out = ByteBufferAllocator().buffer(capacity: m.raw.utf8.count * 2 + 256)
        guard (try? appendTail(m, raw: m.raw, to: &out)) != nil else { return }
        m.encodedRow = out.readBytes(length: out.readableBytes)
    }

    /// The row from `ts` on, with its newline.
    private static func appendTail(_ m: PreparedMessage, raw: String, to out: inout ByteBuffer) throws {
        func field(_ value: String?) {
            guard let value else {
                out.writeStaticString("\\N")
                return
            }
            escape(value, to: &out)
        }
        func number(_ value: Int64?) {
            guard let value else {
                out.writeStaticString("\\N")
                return
            }
            out.writeString(String(value))
        }
        func tab() { out.writeInteger(UInt8(ascii: "\t")) }
        field(m.ts); tab()
        field(m.userID); tab()
        field(m.username); tab()
        field(m.subtype); tab()
        field(m.threadTS); tab()
        number(m.threadKey); tab()
        number(m.replyCount); tab()
        field(m.editedTS); tab()
        number(m.editedKey); tab()
        number(m.flags); tab()
        field(m.text); tab()
        field(SearchTextColumn.stored(m.searchText, text: m.text)); tab()
        field(m.searchExtra); tab()
        field(raw); tab()
        number(m.hash); tab()
        field(reactions(m.reactions)); tab()
        field(try files(m.files)); tab()
        field(PostgresTokens.vector(text: m.searchText, extra: m.searchExtra))
        out.writeInteger(UInt8(ascii: "\n"))
    }

    /// The reactions as the `jsonb` `details(of:)` reads (`StoredReaction`), nil without any.
    static func reactions(_ reactions: [PreparedReaction]) -> String? {
        guard !reactions.isEmpty else { return nil }
        var out = "["
        for (index, reaction) in reactions.enumerated() {
            if index > 0 { out += "," }
            out += "{\"name\":"
            JSONText.appendQuoted(reaction.name, to: &out)
            out += ",\"count\":\(reaction.count),\"users\":\(reaction.usersJSON)}"
        }
        return out + "]"
    }

    /// The files as the `jsonb` `details(of:)` reads (`StoredFile`), nil without any.
    static func files(_ files: [PreparedFile]) throws -> String? {
        guard !files.isEmpty else { return nil }
        let stored = files.map {
            StoredFile(
                id: $0.id, name: $0.name, title: $0.title, mimetype: $0.mimetype, size: $0.size, mode: $0.mode,
                urlPrivate: $0.urlPrivate, permalink: $0.permalink)
        }
        return String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
    }

    /// COPY text escaping: backslash, tab, newline and carriage return escaped; NUL (which PostgreSQL text cannot
    /// hold) dropped.
    static func escape(_ value: String, to out: inout ByteBuffer) {
        var value = value
        value.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() {
                let replacement: StaticString
                switch byte {
                case UInt8(ascii: "\\"): replacement = "\\\\"
                case UInt8(ascii: "\t"): replacement = "\\t"
                case UInt8(ascii: "\n"): replacement = "\\n"
                case UInt8(ascii: "\r"): replacement = "\\r"
                case 0: replacement = ""
                default: continue
                }
                out.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start..<index]))
                out.writeStaticString(replacement)
                start = index + 1
            }
            out.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start...]))
        }
    }
}
