import GRDB

/// One API page (a `conversations.history` / `.replies` answer, an event page or a bare array of messages), ready
/// for the store, with the sync bookkeeping that must be written in the same transaction.
package struct PageWrite: Sendable {
    /// Where a history page sits in its conversation's history, for gap reports.
    package struct Span: Sendable, Equatable {
        package var newest: SlackTimestamp
        package var oldestKey: Int64
        /// Where the page's `next_cursor` points (its ts key), when the cursor has Slack's `next_ts:` form.
        package var nextKey: Int64?
        package var cursor: String?

        package init(newest: SlackTimestamp, oldestKey: Int64, nextKey: Int64?, cursor: String?) {
            self.newest = newest
            self.oldestKey = oldestKey
            self.nextKey = nextKey
            self.cursor = cursor
        }
    }

    package var conversationRowID: Int64
    package var messages: [PreparedMessage] = []
    /// Ts keys of deleted messages of this conversation.
    package var deletions: [Int64] = []
    package var reactions: [ReactionEvent] = []
    package var placeholders: [User] = []
    package var span: Span?
    /// Sync progress to record with the page, so that a stopped sync resumes after it.
    package var sync: SyncProgress?
    /// The messages' raw JSON packed (`packRaws()`); `PreparedMessage.rawLocation` points into it.
    package var rawBlocks: [[UInt8]] = []

    package init(conversationRowID: Int64) {
        self.conversationRowID = conversationRowID
    }

    /// Packs the page's messages' raw JSON into compressed blocks (one conversation's page: a block or a few),
    /// as the export import packs a conversation's day; call it where the page is built, off the writer's thread.
    ///
    /// - Complexity: O(n) in the JSON's bytes.
    package mutating func packRaws() {
        rawBlocks = []
        RawBlocks.pack(&messages, into: &rawBlocks)
    }

    /// The page must be written in its place among the others: its reaction events and sync progress depend on
    /// what came before.
    package var isOrdered: Bool { !reactions.isEmpty || sync != nil }

    /// Splits the page at ts key `cut`: the messages older than it, with the page's deletions, span, placeholders,
    /// reactions and sync progress, and the newer messages alone (nil when there are none).
    ///
    /// Each part carries the packed blocks its messages point into, renumbered from 0, so a part's
    /// `rawLocation`s index its own `rawBlocks`. A block holding messages of both parts goes with both (stored
    /// twice: at most a few blocks per split page). Before 2026-11-28 the newer part kept its locations into the
    /// whole page's blocks and was given none: every message a dump import wrote after its first transaction could
    /// point into another page's block or none (issue 47's D1).
    /// - Complexity: O(m + b) for m messages and b blocks.
    package func split(before cut: Int64) -> (older: PageWrite, newer: PageWrite?) {
        var older = self
        older.messages = []
        older.rawBlocks = []
        var newer = PageWrite(conversationRowID: conversationRowID)
        var olderBlocks: [Int: Int] = [:]
        var newerBlocks: [Int: Int] = [:]
        for var message in messages {
            let isOlder = message.tsKey < cut
            if var location = message.rawLocation {
                // A location outside the page's blocks stays as it is: the writer refuses it (`MessageWriter`).
                if rawBlocks.indices.contains(location.block) {
                    location.block =
                        isOlder
                        ? Self.renumber(location.block, from: rawBlocks, into: &older.rawBlocks, &olderBlocks)
                        : Self.renumber(location.block, from: rawBlocks, into: &newer.rawBlocks, &newerBlocks)
                    message.rawLocation = location
                }
            }
            if isOlder { older.messages.append(message) } else { newer.messages.append(message) }
        }
        return (older, newer.messages.isEmpty ? nil : newer)
    }

    /// Throws `PackingError` when a message points outside the page's own blocks (in a transaction of several pages,
    /// it would read another page's block).
    ///
    /// - Complexity: O(m) for m messages.
    func checkPacking() throws {
        for message in messages {
            if let location = message.rawLocation, !rawBlocks.indices.contains(location.block) {
                throw PackingError(ts: message.ts, block: location.block)
            }
        }
    }

    /// The index block `index` of `blocks` has in `part`, appending it there the first time.
    private static func renumber(
        _ index: Int, from blocks: [[UInt8]], into part: inout [[UInt8]], _ numbers: inout [Int: Int]
    ) -> Int {
        if let known = numbers[index] { return known }
        numbers[index] = part.count
        part.append(blocks[index])
        return part.count - 1
    }
}

/// A sync's progress, recorded in the transaction of the page it describes.
package enum SyncProgress: Sendable, Equatable {
    /// A history page: the run's state after it (or the run is finished), and the thread parents it listed, with
    /// their `latest_reply`, to queue for `conversations.replies`.
    case history(run: SyncRun, finished: Bool, threads: [SyncThreadMark])
    /// A replies page of a queued thread: its next cursor, or nil when the thread is done.
    case thread(threadTS: String, cursor: String?)
}

/// A thread parent a history page listed.
package struct SyncThreadMark: Sendable, Equatable {
    package var ts: String
    package var latestReply: String?

    package init(ts: String, latestReply: String?) {
        self.ts = ts
        self.latestReply = latestReply
    }
}

extension SQLiteArchive {
    /// Writes pages in `db`'s open transaction (an import session's), with the same outcome as writing each in
    /// turn: placeholders, messages (upserted on conversation and ts), deletions, reactions, each page's span and
    /// sync progress.
    ///
    /// Idempotent: writing a page twice changes nothing; an edit replaces the stored text and index entry (the
    /// newest edit wins whatever the order); a deletion or reaction for a message not stored yet waits for it.
    ///
    /// A dump's pages hold a few messages each, newest first: one transaction per page made FTS5 write a segment
    /// per page and merge them (2,780 messages/s on 1M messages in 61,938 pages). Runs of pages without reaction
    /// events or sync progress have their messages written together in ts order, then their deletions and spans:
    /// FTS5 flushes its pending terms whenever a rowid (the time-ordered message id) is lower than the previous
    /// one, and the message table's inserts stay local. Deletions waiting for their message and edits are
    /// order-independent (`applyPendingEvents`, newest edit wins), so only pages with reactions or sync progress,
    /// whose order matters, are written one after the other as they come.
    /// - Parameter copies: the messages of the session's earlier writes that later pages may hold again.
    /// - Complexity: O(m log n) for m messages in an archive of n.
    static func write(pages: [PageWrite], copies: inout RepeatedCopies, in db: Database) throws -> WriteCounts {
        var counts = WriteCounts()
        var start = 0
        while start < pages.count {
            if pages[start].isOrdered {
                counts.add(try SQLiteArchive.write(pages[start], in: db))
                start += 1
                continue
            }
            var end = start + 1
            while end < pages.count && !pages[end].isOrdered { end += 1 }
            counts.add(try SQLiteArchive.writeInTimeOrder(pages[start..<end], copies: &copies, in: db))
            start = end
        }
        return counts
    }

    /// Writes `pages`' placeholders, then all their messages in ts order (stable: a page's revision follows the
    /// earlier page's), then each page's deletions and span.
    ///
    /// - Complexity: O(m log m) to order m messages, plus O(m log n) to write them into an archive of n.
    private static func writeInTimeOrder(
        _ pages: ArraySlice<PageWrite>, copies: inout RepeatedCopies, in db: Database
    ) throws -> WriteCounts {
        var counts = WriteCounts()
        for page in pages { try page.checkPacking() }
        for page in pages { counts.placeholders += try SQLiteArchive.insertPlaceholders(page.placeholders, in: db) }
        var order: [(key: Int64, page: Int, message: Int)] = []
        order.reserveCapacity(pages.reduce(0) { $0 + $1.messages.count })
        for pageIndex in pages.indices {
            for (messageIndex, message) in pages[pageIndex].messages.enumerated() {
                order.append((message.tsKey, pageIndex, messageIndex))
            }
        }
        order.sort { ($0.key, $0.page, $0.message) < ($1.key, $1.page, $1.message) }
        var writer = try MessageWriter(db)
        // Each page's packed JSON, at its own place in the writer's blocks.
        var blockBase: [Int: Int] = [:]
        for pageIndex in pages.indices { blockBase[pageIndex] = writer.usePackedRaws(pages[pageIndex].rawBlocks) }
        for entry in order {
            // Read in place through the pages' storage (`MessageWriter.upsert(at:)`): passed by value, a message
            // is copied, which retains a dozen strings.
            let base = blockBase[entry.page] ?? 0
            let outcome = try writer.upsert(pages[entry.page].messages, at: entry.message, rawBlockBase: base)
            // The fields read in place, not the message copied (see above).
            copies.count(
                outcome, conversation: pages[entry.page].messages[entry.message].conversationRowID, key: entry.key,
                comesTwice: RepeatedCopies.comesTwice(
                    key: entry.key, threadKey: pages[entry.page].messages[entry.message].threadKey,
                    flags: pages[entry.page].messages[entry.message].flags),
                into: &counts)
        }
        try writer.flushCounts()
        for page in pages {
            try recordSpan(of: page, in: db)
            for key in page.deletions {
                try SQLiteArchive.delete(conversationRowID: page.conversationRowID, tsKey: key, in: db)
            }
        }
        return counts
    }

    /// Records the page's span, when it has one, for gap reports.
    private static func recordSpan(of page: PageWrite, in db: Database) throws {
        guard let span = page.span else { return }
        try SQLiteArchive.recordPage(
            conversationRowID: page.conversationRowID, newest: span.newest, oldestKey: span.oldestKey,
            nextKey: span.nextKey, cursor: span.cursor, in: db)
    }

    private static func write(_ page: PageWrite, in db: Database) throws -> WriteCounts {
        let conversation = page.conversationRowID
        try page.checkPacking()
        try recordSpan(of: page, in: db)
        var counts = WriteCounts()
        counts.placeholders = try SQLiteArchive.insertPlaceholders(page.placeholders, in: db)
        var writer = try MessageWriter(db)
        let base = writer.usePackedRaws(page.rawBlocks)
        for index in page.messages.indices {
            counts.count(try writer.upsert(page.messages, at: index, rawBlockBase: base))
        }
        try writer.flushCounts()
        for key in page.deletions { try SQLiteArchive.delete(conversationRowID: conversation, tsKey: key, in: db) }
        for event in page.reactions {
            try SQLiteArchive.react(
                conversationRowID: conversation, tsKey: event.tsKey, name: event.name, userID: event.userID,
                added: event.added, in: db)
        }
        if let sync = page.sync { try SQLiteArchive.record(sync, conversationRowID: conversation, in: db) }
        return counts
    }

    /// Creates the conversation if the archive does not have it (by Slack id); returns whether it was added.
    package func addConversationIfMissing(_ input: ConversationInput, workspace: WorkspaceInput?) throws -> Bool {
        try pool.write { db in try SQLiteArchive.addConversationIfMissing(input, workspace: workspace, in: db) }
    }

    /// `addConversationIfMissing` in `db`'s open transaction (an import session's).
    static func addConversationIfMissing(
        _ input: ConversationInput, workspace: WorkspaceInput?, in db: Database
    ) throws -> Bool {
        let exists = try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM conversation WHERE slack_id = ?)", arguments: [input.slackID])
        guard exists != true else { return false }
        let workspaceID = try workspace.map {
            try SQLiteArchive.upsertWorkspace(teamID: $0.teamID, domain: $0.domain, in: db)
        }
        _ = try SQLiteArchive.upsertConversation(input, workspaceID: workspaceID, in: db)
        return true
    }
}

/// Counts a message that several pages of one import hold once, as added, updated or unchanged by what its first
/// copy found (issue 55: a dump into an empty archive reported its thread parents, which come in their history page
/// and their replies page, "unchanged" too). Thread parents and replies also sent to the channel (both come in a
/// history page and a replies page, which may be written in different transactions) are remembered for the whole
/// import (far fewer than the messages); other messages only among the copies of one ts next to each other in a
/// write. Before 2026-12-01 only thread parents were remembered: sample-data's Web-API-script dump in transactions
/// of 500 messages counted 21 broadcast replies "unchanged" in an empty archive.
struct RepeatedCopies {
    private struct Key: Hashable {
        var conversation: Int64
        var ts: Int64
    }
    /// Outcomes of the messages that come twice (`comesTwice`), for the whole import.
    private var parents: [Key: UpsertOutcome] = [:]
    private var sameTS: (ts: Int64, outcomes: [Int64: UpsertOutcome]) = (Int64.min, [:])

    /// Whether pages of one import hold a message in two places (a history page and a replies page): a thread
    /// parent or a reply also sent to the channel.
    /// - Complexity: O(1).
    static func comesTwice(key: Int64, threadKey: Int64?, flags: Int64) -> Bool {
        threadKey == key || flags & MessageFlags.broadcast.rawValue != 0
    }

    /// Counts `outcome` of the message at `key` into `counts` unless an earlier copy was counted: a copy that
    /// changes a message found unchanged makes it one updated message.
    /// - Complexity: O(1).
    mutating func count(
        _ outcome: UpsertOutcome, conversation: Int64, key ts: Int64, comesTwice: Bool,
        into counts: inout WriteCounts
    ) {
        if ts != sameTS.ts { sameTS = (ts, [:]) }
        let key = Key(conversation: conversation, ts: ts)
        let earlier = sameTS.outcomes[conversation] ?? (comesTwice ? parents[key] : nil)
        var now = outcome
        switch (earlier, outcome) {
        case (nil, _):
            counts.count(outcome)
        case (.unchanged?, .updated):
            counts.unchanged -= 1
            counts.updated += 1
        case (let first?, _):
            now = first
        }
        sameTS.outcomes[conversation] = now
        if comesTwice { parents[key] = now }
    }
}
