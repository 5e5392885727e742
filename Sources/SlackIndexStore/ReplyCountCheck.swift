/// Which thread parents an import must re-count: those whose replies outnumber the reply count they declare, or
/// whose parent this import did not bring.
///
/// Exports declare `reply_count` on parents, and every reply follows its parent (messages are written in ts
/// order). Counting replies as they are written finds the few parents that need fixing (old exports without
/// `reply_count`, replies to parents missing from the export) without re-reading every reply row at the end,
/// which cost ~1.1 s of the 1M-message import. Conversations that had messages before the import are re-counted
/// whole: replies stored earlier (sync pages) are not seen here.
///
/// - Complexity: O(1) per message; memory O(threads in the import).
struct ReplyCountCheck {
    private struct Thread: Hashable {
        var conversation: Int64
        var key: Int64
    }
    private var declared: [Thread: Int64] = [:]
    private var written: [Thread: Int64] = [:]

    /// Notes a message the writer has just upserted.
    mutating func note(_ message: PreparedMessage, _ outcome: UpsertOutcome) {
        guard outcome != .unchanged, let threadKey = message.threadKey else { return }
        let thread = Thread(conversation: message.conversationRowID, key: threadKey)
        if threadKey == message.tsKey {
            declared[thread] = message.replyCount
        } else if outcome == .added {
            written[thread, default: 0] += 1
        }
    }

    /// The thread keys to re-count, by conversation row id: replies written outnumber the declared count, or the
    /// parent was not written by this import.
    func threadsToRecount() -> [Int64: [Int64]] {
        var result: [Int64: [Int64]] = [:]
        for (thread, count) in written where count > declared[thread] ?? -1 {
            result[thread.conversation, default: []].append(thread.key)
        }
        return result.mapValues { $0.sorted() }
    }
}
