import Foundation

/// Users and conversations in a tree of API responses, recognised by content: `users.list` and
/// `conversations.list` responses (`{"members": [...]}`, `{"channels": [...]}`), `users.info` and
/// `conversations.info` responses (`{"user": {...}}`, `{"channel": {...}}`), and bare objects or arrays of them as
/// dumping tools write one per file. Ids tell users (`U…`, `W…`) from conversations (`C…`, `G…`, `D…`).
enum ListingFile {
    case users([UserRecord])
    case conversations([ConversationRecord])

    /// What `data` holds, or nil when it is neither users nor conversations.
    static func recognise(_ data: Data) -> ListingFile? {
        let decoder = JSONDecoder()
        if let page = try? decoder.decode(Members.self, from: data), isUsers(page.members) { return .users(page.members) }
        if let page = try? decoder.decode(Channels.self, from: data), isConversations(page.channels) {
            return .conversations(page.channels)
        }
        if let info = try? decoder.decode(UserInfo.self, from: data), isUsers([info.user]) { return .users([info.user]) }
        if let info = try? decoder.decode(ChannelInfo.self, from: data), isConversations([info.channel]) {
            return .conversations([info.channel])
        }
        if let users = try? decoder.decode([UserRecord].self, from: data), isUsers(users) { return .users(users) }
        if let conversations = try? decoder.decode([ConversationRecord].self, from: data), isConversations(conversations) {
            return .conversations(conversations)
        }
        if let user = try? decoder.decode(UserRecord.self, from: data), isUsers([user]) { return .users([user]) }
        if let conversation = try? decoder.decode(ConversationRecord.self, from: data), isConversations([conversation]) {
            return .conversations([conversation])
        }
        return nil
    }

    private static func isUsers(_ users: [UserRecord]) -> Bool {
        !users.isEmpty && users.allSatisfy { $0.id.first == "U" || $0.id.first == "W" }
    }

    private static func isConversations(_ records: [ConversationRecord]) -> Bool {
        !records.isEmpty && records.allSatisfy { Importer.kind(ofConversationID: $0.id) != nil }
    }

    /// The kind the record declares (`is_im`, `is_mpim`, `is_private`), else the one its id implies.
    static func kind(of record: ConversationRecord) -> ConversationKind {
        if record.isIM == nil && record.isMPIM == nil && record.isPrivate == nil {
            return Importer.kind(ofConversationID: record.id) ?? .channel
        }
        return record.declaredKind
    }

    private struct Members: Decodable { var members: [UserRecord] }
    private struct Channels: Decodable { var channels: [ConversationRecord] }
    private struct UserInfo: Decodable { var user: UserRecord }
    private struct ChannelInfo: Decodable { var channel: ConversationRecord }
}

extension Importer {
    /// Stores the users and conversations of `files` (see `ListingFile`), users first so that DMs are named
    /// after their members; a file that holds neither is reported as skipped.
    func importListings(_ files: [String], summary: inout ImportSummary) throws {
        guard !files.isEmpty else { return }
        var users: [UserRecord] = []
        var conversations: [ConversationRecord] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                summary.skippedFiles.append(.init(path: file, reason: "the file cannot be read"))
                continue
            }
            switch ListingFile.recognise(data) {
            case .users(let found): users += found
            case .conversations(let found): conversations += found
            case nil:
                summary.skippedFiles.append(
                    .init(
                        path: file,
                        reason: "not an API page, user or conversation (not in a folder named by a conversation id)"))
            }
        }
        let handles = Dictionary(users.map { ($0.id, $0.name ?? $0.id) }, uniquingKeysWith: { first, _ in first })
        let inputs = conversations.map { $0.input(kind: ListingFile.kind(of: $0), handles: handles, folder: false) }
        let stored = try archive.storeListings(users: users.map(\.input), conversations: inputs)
        summary.usersAdded += stored.usersAdded
        summary.conversationsAdded += stored.conversationsAdded
    }
}
