import Foundation

extension Importer {
    /// Stores remote search hits the archive does not hold, creating their conversations when unknown; returns how
    /// many messages were added. A hit becomes a plain message (`ts`, `user`, `username`, `text`); a later sync or
    /// export import of the same message replaces it with the full one.
    func storeRemoteHits(_ hits: [RemoteHit]) throws -> Int {
        let names = try archive.nameDirectory()
        let known = Set(names.channels.keys)
        let groups = Dictionary(grouping: hits, by: \.conversationID)
        let missing = groups.keys.filter { !known.contains($0) }.sorted().map { id in
            let first = groups[id]?.first
            let kind: ConversationKind =
                id.hasPrefix("D") ? .dm : (first?.isPrivate == true ? .private : .channel)
            return ConversationInput(slackID: id, kind: kind, name: first?.conversationName ?? id)
        }
        if !missing.isEmpty { _ = try archive.storeListings(users: [], conversations: missing) }
        var preparer = MessagePreparer(names: names)
        var summary = ImportSummary()
        for (id, group) in groups.sorted(by: { $0.key < $1.key }) {
            let conversation = try archive.conversation(named: id)
            let messages: [[String: String]] = group.map { hit in
                var object = ["type": "message", "ts": hit.ts, "text": hit.text]
                if let user = hit.userID { object["user"] = user }
                if let name = hit.username { object["username"] = name }
                return object
            }
            let bytes = try JSONSerialization.data(withJSONObject: messages, options: [.sortedKeys])
            _ = try applyPage(
                [UInt8](bytes), source: "search.messages", into: conversation, preparer: &preparer, summary: &summary,
                recordSpan: false, extraFlags: .savedFromSearch)
        }
        return summary.messagesAdded
    }
}
