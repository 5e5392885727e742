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
        // One session through the import pipeline, as every write of messages: the conversations first (committed,
        // so that they are found by name), then a page per conversation.
        let pipeline = ImportPipeline(sink: archive, plan: ImportPlan(), capacity: 1)
        var added = 0
        do {
            if !missing.isEmpty {
                _ = try pipeline.storeListings(users: [], conversations: missing, workspace: nil)
            }
            var preparer = MessagePreparer(names: names)
            for (id, group) in groups.sorted(by: { $0.key < $1.key }) {
                let conversation = try archive.conversation(named: id)
                var write = PageWrite(conversationRowID: conversation.rowID)
                for hit in group {
                    guard case .success(var message) = preparer.prepare(hit.record, raw: hit.rawJSON,
                        conversationRowID: conversation.rowID)
                    else { continue }
                    message.flags |= MessageFlags.savedFromSearch.rawValue
                    write.messages.append(message)
                }
                write.placeholders = preparer.takePlaceholders()
                added += try pipeline.write(page: write).added
            }
        } catch {
            _ = pipeline.finish()
            throw error
        }
        // Committed and safe in the write-ahead log when only the final checkpoint failed: stored all the same.
        if let failure = pipeline.finish().failure, (failure as? BulkImportFailure)?.inWAL != true { throw failure }
        return added
    }
}

extension RemoteHit {
    /// The hit as a plain message record (`ts`, `user`, `username`, `text`).
    var record: MessageRecord {
        MessageRecord(
            type: "message", subtype: nil, ts: ts, user: userID, botID: nil, username: username, text: text,
            threadTS: nil, replyCount: nil, editedTS: nil, editedUser: nil, reactions: [], files: [], attachments: [],
            blockText: nil, isPinned: false, deletedTS: nil, channel: nil, profileHandle: nil, profileRealName: nil,
            profileDisplayName: nil, changedMessage: [], innerMessageRange: nil)
    }

    /// The JSON the archive keeps for the hit: the same fields, keys sorted, compact.
    var rawJSON: String {
        var fields: [(String, String)] = [("text", text), ("ts", ts), ("type", "message")]
        if let userID { fields.append(("user", userID)) }
        if let username { fields.append(("username", username)) }
        var out = "{"
        for (index, (key, value)) in fields.sorted(by: { $0.0 < $1.0 }).enumerated() {
            if index > 0 { out += "," }
            JSONText.appendQuoted(key, to: &out)
            out += ":"
            JSONText.appendQuoted(value, to: &out)
        }
        return out + "}"
    }
}
