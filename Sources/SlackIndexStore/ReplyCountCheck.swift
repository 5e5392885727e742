/// Which thread parents an import must re-count: those whose replies outnumber the reply count they declare, or
/// whose parent this import did not bring.
///
/// Exports declare `reply_count` on parents, and every reply follows its parent (messages are written in ts
/// order). Counting replies as they are written finds the few parents that need fixing (old exports without
/// `reply_count`, replies to parents missing from the export) without re-reading every reply row at the end,
/// which cost ~1.1 s of the 1M-message import. Conversations that had messages before the import are re-counted
/// whole: replies stored earlier (sync pages) are not seen here.
///
/// Only threads whose replies are still expected are held: a thread leaves when its declared count of replies has
/// arrived, so memory follows the threads open at one time, not the export's size (two maps over every thread held
/// ~80 bytes a thread: the generated exports have ~65,000 threads per million messages).
///
/// - Complexity: O(1) per message; memory O(threads awaiting replies + threads to re-count).
struct ReplyCountCheck {
    private struct Thread: Hashable {
        var conversation: Int64
        var key: Int64
    }
    /// Threads whose parent this import wrote, with the replies it declares and the replies written since.
    private var open: [Thread: (declared: Int64, written: Int64)] = [:]
    private var recount: Set<Thread> = []

    /// Notes a message the writer has just upserted.
    mutating func note(_ message: PreparedMessage, _ outcome: UpsertOutcome) {
        withUnsafePointer(to: message) { note($0, outcome) }
    }

    /// `note` of the message `message` points to, read in place (the bulk writer's messages are not copied).
    mutating func note(_ message: UnsafePointer<PreparedMessage>, _ outcome: UpsertOutcome) {
        guard outcome != .unchanged, let threadKey = message.pointee.threadKey else { return }
        let thread = Thread(conversation: message.pointee.conversationRowID, key: threadKey)
        if threadKey == message.pointee.tsKey {
            // A parent comes before its replies (messages are written in ts order); a revision of it may change
            // the count it declares. A revision of a parent whose replies are no longer tracked is re-counted.
            var state = open[thread] ?? (declared: 0, written: 0)
            if open[thread] == nil && outcome == .updated { recount.insert(thread) }
            state.declared = message.pointee.replyCount
            settle(thread, state)
        } else if outcome == .added {
            guard var state = open[thread] else {
                // The parent is not from this import, or this reply is one more than it declares.
                recount.insert(thread)
                return
            }
            state.written += 1
            settle(thread, state)
        }
    }

    /// Keeps the thread while replies are still expected; one with more replies than declared is re-counted.
    private mutating func settle(_ thread: Thread, _ state: (declared: Int64, written: Int64)) {
        if state.written < state.declared {
            open[thread] = state
        } else {
            open[thread] = nil
            if state.written > state.declared { recount.insert(thread) }
        }
    }

    /// The thread keys to re-count, by conversation row id: replies written outnumber the declared count, or the
    /// parent was not written by this import.
    func threadsToRecount() -> [Int64: [Int64]] {
        var result: [Int64: [Int64]] = [:]
        for thread in recount { result[thread.conversation, default: []].append(thread.key) }
        return result.mapValues { $0.sorted() }
    }
}
