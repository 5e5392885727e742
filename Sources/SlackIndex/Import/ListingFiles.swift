import Foundation

/// Users and conversations in a tree of API responses, recognised by content: `users.list` and
/// `conversations.list` responses (`{"members": [...]}`, `{"channels": [...]}`), `users.info` and
/// `conversations.info` responses (`{"user": {...}}`, `{"channel": {...}}`), and bare objects or arrays of them as
/// dumping tools write one per file, maps of ids to names, and lists of conversation ids (a `channels.json` of
/// scripts that call the Web API, named by an id map beside it). Ids tell users (`U…`, `W…`) from conversations
/// (`C…`, `G…`, `D…`).
enum ListingFile {
    case users([UserRecord])
    case conversations([ConversationRecord])
    /// `{"C0VFAZVVNIR": "general", "U0AAAAAAAA1": "ann"}`.
    case names([String: String])
    /// `["C0VFAZVVNIR", "C0AAAAAAAA2"]`.
    case conversationIDs([String])

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
        if let names = try? decoder.decode([String: String].self, from: data), !names.isEmpty,
            names.keys.allSatisfy({ isUserID($0) || Importer.kind(ofConversationID: $0) != nil })
        {
            return .names(names)
        }
        if let ids = try? decoder.decode([String].self, from: data), !ids.isEmpty,
            ids.allSatisfy({ Importer.kind(ofConversationID: $0) != nil })
        {
            return .conversationIDs(ids)
        }
        return nil
    }

    /// What the summary calls such files.
    var kindName: String {
        switch self {
        case .users: "user listings"
        case .conversations: "conversation listings"
        case .names: "id maps"
        case .conversationIDs: "conversation id lists"
        }
    }

    static func isUserID(_ id: String) -> Bool {
        (9...20).contains(id.count) && (id.first == "U" || id.first == "W")
            && id.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }

    private static func isUsers(_ users: [UserRecord]) -> Bool {
        !users.isEmpty && users.allSatisfy { isUserID($0.id) }
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

/// The users, conversations and names found in a dump's listing files.
struct DumpListings {
    var users: [UserRecord] = []
    var conversations: [ConversationRecord] = []
    var names: [String: String] = [:]
    /// Conversations known by id alone; an id map names them, else they are named by their id.
    var conversationIDs: [String] = []

    var isEmpty: Bool { users.isEmpty && conversations.isEmpty && names.isEmpty && conversationIDs.isEmpty }

    mutating func add(_ listing: ListingFile) {
        switch listing {
        case .users(let found): users += found
        case .conversations(let found): conversations += found
        case .names(let found): names.merge(found) { first, _ in first }
        case .conversationIDs(let found): conversationIDs += found
        }
    }
}

extension Importer {
    /// Stores the users, conversations and id maps among `files` (see `ListingFile`); returns the files that are
    /// pages or JSON lines, to import after them. A file that is none of these is reported as skipped.
    func importListings(
        _ files: [String], into writer: ImportPipeline, summary: inout ImportSummary
    ) throws -> [String] {
        var pages: [String] = []
        var found = DumpListings()
        for file in files {
            do {
                if try JSONLines.isLines(file) {
                    pages.append(file)
                    continue
                }
            } catch let error as ImportError {
                summary.skippedFiles.append(.init(path: file, reason: error.description))
                continue
            }
            guard let data = FileManager.default.contents(atPath: file) else {
                summary.skippedFiles.append(.init(path: file, reason: "the file cannot be read"))
                continue
            }
            // Pages first, by a look at their keys: decoding a large page as a listing would parse it whole.
            if Importer.isPage(data) {
                pages.append(file)
            } else if let listing = ListingFile.recognise(data) {
                found.add(listing)
                summary.recognise(listing.kindName)
            } else {
                summary.skippedFiles.append(
                    .init(
                        path: file,
                        reason: "not an API page, user, conversation or id map (and not in a folder named by a "
                            + "conversation id)"))
            }
        }
        try store(found, into: writer, summary: &summary)
        return pages
    }

    /// Stores listings: users (so that DMs are named after their members), conversations, then names from id maps
    /// (which only fill in what nothing else named).
    func store(_ found: DumpListings, into writer: ImportPipeline, summary: inout ImportSummary) throws {
        guard !found.isEmpty else { return }
        let users = found.users
        var handles = Dictionary(users.map { ($0.id, $0.name ?? $0.id) }, uniquingKeysWith: { first, _ in first })
        // DMs are named after their members: those listed in other files or imports are in the archive.
        let unknown = Set(found.conversations.flatMap(\.members)).subtracting(handles.keys)
        handles.merge(try archive.handles(of: unknown)) { listed, _ in listed }
        let inputs = found.conversations.map {
            $0.input(kind: ListingFile.kind(of: $0), handles: handles, folder: false)
        }
        // The dump's workspace is its users' most common team (Slack Connect brings a few of other teams); a dump
        // knows no domain, so two workspaces' shared names are labelled by team id (issue 55).
        let workspace = Importer.mostCommon(users.compactMap(\.teamID)).map { WorkspaceInput(teamID: $0, domain: nil) }
        let stored = try writer.storeListings(users: users.map(\.input), conversations: inputs, workspace: workspace)
        summary.usersAdded += stored.usersAdded
        summary.conversationsAdded += stored.conversationsAdded
        // Listed again (a dump onto an export's archive): counted, not shown as 0/0/0 (issue 55).
        summary.conversationsUpdated += stored.conversationsUpdated
        summary.conversationsUnchanged += stored.conversationsUnchanged
        var userNames: [String: String] = [:]
        var conversationNames: [String: (name: String, kind: ConversationKind)] = [:]
        // Ids listed alone are created under their id when no map names them (`storeNames` creates what it does not
        // find, and names only what nothing else named).
        let listed = Set(found.conversations.map(\.id))
        let names = found.conversationIDs.filter { !listed.contains($0) }
            .reduce(into: found.names) { names, id in names[id] = names[id] ?? id }
        for (id, name) in names {
            if let kind = Importer.kind(ofConversationID: id) {
                // A `G…` id is a private channel or a group DM; Slack names its group DMs `mpdm-ann--bo-1`.
                let isGroupDM = kind == .private && Conversation.groupMessageMembers(name) != nil
                conversationNames[id] = (name, isGroupDM ? .mpim : kind)
            } else {
                userNames[id] = name
            }
        }
        let named = try writer.storeNames(users: userNames, conversations: conversationNames)
        summary.placeholderUsers += named.placeholders
        summary.conversationsAdded += named.conversationsAdded
        summary.conversationsUpdated += named.conversationsNamed
        summary.conversationsUnchanged += named.conversationsUnchanged
    }
}
