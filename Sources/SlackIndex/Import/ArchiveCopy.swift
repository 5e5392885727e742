import Foundation
import SlackIndexStore

/// What a copy reads of its source archive: the roles, whichever backend holds them.
package typealias CopySource = Directory & Timelines

/// Where a copy is, for a status line.
public struct CopyProgress: Sendable {
    /// Conversations done and to copy.
    public var conversationsDone: Int
    public var conversations: Int
    /// Messages read from the source so far.
    public var messages: Int
    /// The conversation being copied.
    public var current: String
}

extension Importer {
    /// Messages read from the source per request and prepared together.
    static let copyPage = 1_000

    /// Copies another archive into this one through the import pipeline, as an import of its messages: workspaces,
    /// users, the conversations `user` may read (public channels and those it is a member of; every one when nil)
    /// and each of their messages as Slack gave it (its JSON, with the reactions the source holds now), deleted ones
    /// marked deleted. Idempotent and resumable as every import: what was committed stays, and the same copy run
    /// again adds the rest and reports the others unchanged.
    ///
    /// Not copied: `serve`'s tokens (secrets of the archive they were made for), sync progress and gap records,
    /// stored files.
    ///
    /// - Complexity: O(n) messages, read in keyset pages of `copyPage` per conversation.
    package func copy(
        from source: any CopySource, as user: String?, progress: (@Sendable (CopyProgress) -> Void)? = nil
    ) throws -> ImportSummary {
        let started = Date()
        var summary = ImportSummary()
        if let user, try source.archivedUser(id: user) == nil {
            throw ImportError.unknownCopyUser(user)
        }
        let reader = user.map { APIToken(id: 0, userID: $0, isAdmin: false, created: 0) }
        let conversations = try source.conversations().filter { reader?.mayRead($0) ?? true }
        try recordingWriteFailure(in: &summary) { summary in
            try writingPages(summary: &summary) { targets, summary in
                try copyListings(from: source, conversations: conversations, targets: targets, summary: &summary)
                var preparer = MessagePreparer(names: try archive.nameDirectory())
                var read = 0
                for (index, conversation) in conversations.enumerated() {
                    if stop?.isRequested == true {
                        summary.interrupted = true
                        return
                    }
                    progress?(CopyProgress(
                        conversationsDone: index, conversations: conversations.count, messages: read,
                        current: conversation.displayName))
                    read += try copyMessages(
                        of: conversation, from: source, targets: &targets, preparer: &preparer, summary: &summary)
                }
            }
        }
        summary.sources = [source.path]
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    /// The source's users, and its conversations grouped by workspace, stored through the writer.
    private func copyListings(
        from source: any CopySource, conversations: [Conversation], targets: PageTargets,
        summary: inout ImportSummary
    ) throws {
        var users: [UserInput] = []
        var after: String?
        while true {
            let page = try source.usersPage(after: after, limit: 1_000)
            guard let last = page.last else { break }
            users += page.map {
                UserInput(
                    id: $0.user.id, teamID: $0.teamID, handle: $0.user.handle, realName: $0.user.realName,
                    displayName: $0.user.displayName, isBot: $0.user.isBot, isDeleted: $0.user.isDeleted,
                    timeZone: $0.timeZone, isPlaceholder: $0.user.isPlaceholder)
            }
            after = last.user.id
        }
        let created = Dictionary(
            try source.visibleConversations(
                to: APIToken(id: 0, userID: "", isAdmin: true, created: 0), kinds: Set(ConversationKind.allCases),
                excludeArchived: false, after: nil, limit: .max
            ).map { ($0.conversation.id, $0.created) }, uniquingKeysWith: { first, _ in first })
        let workspaces = try source.workspaces()
        // Conversations by their workspace's team id (nil: the archive knows none, as after a dump).
        var groups: [String?: [ConversationInput]] = [:]
        for c in conversations {
            let input = ConversationInput(
                slackID: c.id, kind: c.kind, name: c.name, created: created[c.id] ?? nil, topic: c.topic,
                purpose: c.purpose, isArchived: c.isArchived, members: c.members)
            groups[c.workspaceID, default: []].append(input)
        }
        var first = true
        for (team, inputs) in groups.sorted(by: { ($0.key ?? "") < ($1.key ?? "") }) {
            let workspace = team.map { id in
                WorkspaceInput(teamID: id, domain: workspaces.first { $0.teamID == id }?.domain)
            }
            // The users once, with the first group.
            let stored = try targets.pipeline.storeListings(
                users: first ? users : [], conversations: inputs, workspace: workspace)
            first = false
            summary.usersAdded += stored.usersAdded
            summary.conversationsAdded += stored.conversationsAdded
            summary.conversationsUpdated += stored.conversationsUpdated
            summary.conversationsUnchanged += stored.conversationsUnchanged
        }
        if groups.isEmpty, !users.isEmpty {
            let stored = try targets.pipeline.storeListings(users: users, conversations: [], workspace: nil)
            summary.usersAdded += stored.usersAdded
        }
    }

    /// Every message of one conversation, oldest first, as pages into the buffer; returns how many were read.
    private func copyMessages(
        of conversation: Conversation, from source: any CopySource, targets: inout PageTargets,
        preparer: inout MessagePreparer, summary: inout ImportSummary
    ) throws -> Int {
        let destination = try archive.conversation(named: conversation.id)
        targets.touched.insert(destination.rowID)
        var after: Int64?
        var read = 0
        while true {
            let rows = try source.storedRows(conversation: conversation, after: after, limit: Self.copyPage)
            guard let last = rows.last else { return read }
            after = last.tsKey
            read += rows.count
            let ids = rows.map(\.rowID)
            let raws = try source.rawMessages(ids: ids)
            let details = try source.details(of: ids)
            var write = PageWrite(conversationRowID: destination.rowID)
            for row in rows {
                guard var json = raws[row.rowID]?.json,
                    var record = json.withUTF8({ bytes in try? MessageRecord(json: bytes) })
                else {
                    summary.skipMessage(MessagePreparer.Rejection.notAMessage.rawValue)
                    continue
                }
                // The reactions the source holds now (reaction events change them, not the JSON).
                record.reactions = (details[row.rowID]?.reactions ?? []).map {
                    ReactionRecord(name: $0.name, count: $0.count, users: $0.users)
                }
                switch preparer.prepare(record, raw: json, conversationRowID: destination.rowID) {
                case .success(var message):
                    message.flags |= row.flags.rawValue & MessageFlags.savedFromSearch.rawValue
                    write.messages.append(message)
                    if row.isDeleted { write.deletions.append(row.tsKey) }
                case .failure(let rejection):
                    summary.skipMessage(rejection.rawValue)
                }
            }
            write.placeholders = preparer.takePlaceholders()
            archive.prepareForWrite(&write)
            try targets.buffer.add(write, summary: &summary)
        }
    }
}
