import GRDB
import Synchronization

/// Tells listeners which message rows a committed transaction inserted, updated or deleted.
///
/// Listeners run on the writer's thread right after the commit: they must only record the ids (the timeline
/// cache resolves and drops the affected pages on its next read).
/// `@unchecked Sendable`: `uncommitted` is touched only on the writer's serialized queue (GRDB calls observers
/// there); `listeners` is behind a Mutex.
final class MessageChangeObserver: TransactionObserver, @unchecked Sendable {
    private var uncommitted: [Int64] = []
    let listeners = Mutex<[@Sendable ([Int64]) -> Void]>([])

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        eventKind.tableName == "message"
    }

    func databaseDidChange(with event: DatabaseEvent) {
        uncommitted.append(event.rowID)
    }

    func databaseDidCommit(_ db: Database) {
        guard !uncommitted.isEmpty else { return }
        let ids = uncommitted
        uncommitted = []
        for listener in listeners.withLock({ $0 }) { listener(ids) }
    }

    func databaseDidRollback(_ db: Database) {
        uncommitted = []
    }
}

extension SQLiteArchive {
    /// Calls `listener` with the row ids of the messages each committed write changed, in this process.
    ///
    /// The observer is installed on first use, so processes that never read timelines (a bulk import) pay nothing.
    package func onMessageChanges(_ listener: @escaping @Sendable ([Int64]) -> Void) {
        let observer = changeObserver.withLock { installed -> MessageChangeObserver in
            if let installed { return installed }
            let observer = MessageChangeObserver()
            pool.add(transactionObserver: observer, extent: .databaseLifetime)
            installed = observer
            return observer
        }
        observer.listeners.withLock { $0.append(listener) }
    }

    /// Where the given messages are: conversation, ts and thread, for cache invalidation.
    package func locations(of rowIDs: [Int64]) throws -> [(conversation: Int64, tsKey: Int64, threadKey: Int64?)] {
        try pool.read { db in
            var out: [(Int64, Int64, Int64?)] = []
            for chunk in stride(from: 0, to: rowIDs.count, by: 500) {
                let ids = Array(rowIDs[chunk..<min(chunk + 500, rowIDs.count)])
                let list = "(" + ids.map { _ in "?" }.joined(separator: ",") + ")"
                for row in try Row.fetchAll(
                    db, sql: "SELECT conversation_id, ts_key, thread_key FROM message WHERE id IN \(list)",
                    arguments: StatementArguments(ids))
                {
                    out.append((row["conversation_id"], row["ts_key"], row["thread_key"]))
                }
            }
            return out
        }
    }
}
