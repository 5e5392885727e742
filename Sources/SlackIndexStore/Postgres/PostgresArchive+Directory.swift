import Foundation
import PostgresNIO

/// Who and where on PostgreSQL: conversations, users, workspaces, names and counts.
///
/// Conversations and users are reference tables (thousands of rows at most): they are read whole and matched in
/// Swift with the same rules as the SQLite archive (`ClosestNames`, the workspace label, byte order of names), so
/// both backends name and sort them alike whatever the database's collation.
extension PostgresArchive {
    /// Every conversation with its workspace's domain and label (`WorkspaceLabel`'s rule), and its export folder.
    ///
    /// - Complexity: O(c + w) rows; the labels O(c) in Swift.
    func allConversations() throws -> [(conversation: Conversation, folder: String?)] {
        try directory.conversations { try loadConversations() }
    }

    private func loadConversations() throws -> [(conversation: Conversation, folder: String?)] {
        let workspaces = try link.query("SELECT id, team_id, domain FROM workspace").map {
            (id: try $0.int("id"), teamID: try $0.string("team_id"), domain: try $0.optionalString("domain"))
        }
        let rows = try link.query(
            """
            SELECT id, slack_id, workspace_id, kind, name, folder, topic, purpose, is_archived, members
            FROM conversation ORDER BY id
            """)
        struct Row {
            var conversation: Conversation
            var workspaceID: Int64?
            var folder: String?
        }
        let byID = Dictionary(workspaces.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var all: [Row] = []
        for row in rows {
            let workspaceID = try row.optionalInt("workspace_id")
            let conversation = Conversation(
                rowID: try row.int("id"), id: try row.string("slack_id"),
                kind: ConversationKind(rawValue: try row.string("kind")) ?? .channel, name: try row.string("name"),
                topic: try row.optionalString("topic"), purpose: try row.optionalString("purpose"),
                isArchived: try row.bool("is_archived"), members: JSONText.strings(try row.string("members")) ?? [],
                workspaceDomain: workspaceID.flatMap { byID[$0]?.domain },
                workspaceID: workspaceID.flatMap { byID[$0]?.teamID })
            all.append(Row(conversation: conversation, workspaceID: workspaceID, folder: try row.optionalString("folder")))
        }
        // The label: where another workspace exists and a conversation of the same name lies in another workspace.
        var workspacesByName: [String: Set<Int64?>] = [:]
        for row in all { workspacesByName[row.conversation.name, default: []].insert(row.workspaceID) }
        return all.map { row in
            var conversation = row.conversation
            if let id = row.workspaceID, let workspace = byID[id], workspaces.count > 1,
                (workspacesByName[conversation.name]?.count ?? 0) > 1
            {
                let domain = workspace.domain ?? ""
                let shared = workspaces.contains { $0.id != id && $0.domain == domain }
                conversation.workspace = !domain.isEmpty && !shared ? domain : workspace.teamID
            }
            return (conversation, row.folder)
        }
    }

    /// The conversation with this row id (for pages and hits).
    func conversationsByRowID() throws -> [Int64: Conversation] {
        Dictionary(try allConversations().map { ($0.conversation.rowID, $0.conversation) }, uniquingKeysWith: { a, _ in a })
    }

    package func conversation(named reference: String, allowingPrefix: Bool) throws -> Conversation {
        var name = reference
        if name.hasPrefix("<#"), name.hasSuffix(">") {
            name = String(name.dropFirst(2).dropLast().prefix { $0 != "|" })
        }
        if name.hasPrefix("#") { name.removeFirst() }
        let all = try allConversations()
        if let found = all.first(where: { $0.conversation.id == name }) { return found.conversation }
        var found = all.filter { $0.conversation.name == name || $0.folder == name }
        if found.isEmpty {
            found = all.filter { Self.sameIgnoringCase($0.conversation.name, name) || $0.folder.map { Self.sameIgnoringCase($0, name) } == true }
        }
        if found.isEmpty, let qualified = WorkspaceLabel.split(name) {
            found = try inWorkspace(qualified.name, workspace: qualified.workspace, among: all)
        }
        if found.isEmpty, allowingPrefix {
            found = all.filter {
                ClosestNames.startsWith($0.conversation.name, name)
                    || $0.folder.map { ClosestNames.startsWith($0, name) } == true
            }
        }
        if found.count == 1 { return found[0].conversation }
        if found.isEmpty {
            throw StoreError.conversationNotFound(reference, closest: try closestConversationNames(to: name))
        }
        throw StoreError.ambiguousConversation(
            reference, candidates: found.map { "\($0.conversation.displayName) (\($0.conversation.id))" })
    }

    /// SQLite's `COLLATE NOCASE`: ASCII letters compared without case, everything else exactly.
    static func sameIgnoringCase(_ a: String, _ b: String) -> Bool {
        func folded(_ s: String) -> [UInt8] { s.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 } }
        return folded(a) == folded(b)
    }

    /// The conversations named `name` in the workspace whose domain or team id is `workspace`.
    private func inWorkspace(
        _ name: String, workspace: String, among all: [(conversation: Conversation, folder: String?)]
    ) throws -> [(conversation: Conversation, folder: String?)] {
        let ids = Set(
            try link.query("SELECT id, team_id, domain FROM workspace").filter {
                let domain = try $0.optionalString("domain") ?? ""
                let teamID = try $0.string("team_id")
                return Self.sameIgnoringCase(domain, workspace) || Self.sameIgnoringCase(teamID, workspace)
            }.map { try $0.int("id") })
        let rows = try link.query("SELECT id, workspace_id FROM conversation WHERE workspace_id IS NOT NULL")
        var inside: Set<Int64> = []
        for row in rows where ids.contains(try row.int("workspace_id")) { inside.insert(try row.int("id")) }
        return all.filter {
            inside.contains($0.conversation.rowID)
                && (Self.sameIgnoringCase($0.conversation.name, name)
                    || $0.folder.map { Self.sameIgnoringCase($0, name) } == true)
        }
    }

    package func conversations() throws -> [Conversation] {
        try allConversations().map(\.conversation).sorted {
            bytesBefore(($0.kind.rawValue, $0.name), ($1.kind.rawValue, $1.name))
        }
    }

    package func conversations(matching name: String) throws -> [Conversation] {
        let all = try allConversations()
        if let qualified = WorkspaceLabel.split(name) {
            return try inWorkspace(qualified.name, workspace: qualified.workspace, among: all).map(\.conversation)
        }
        return all.filter {
            $0.conversation.id == name || Self.sameIgnoringCase($0.conversation.name, name)
                || $0.folder.map { Self.sameIgnoringCase($0, name) } == true
        }.map(\.conversation)
    }

    package func conversations(withNamePrefix prefix: String) throws -> [Conversation] {
        try allConversations().filter {
            ClosestNames.startsWith($0.conversation.name, prefix)
                || $0.folder.map { ClosestNames.startsWith($0, prefix) } == true
        }.map(\.conversation)
    }

    package func closestConversationNames(to name: String) throws -> [String] {
        let names = try allConversations().map {
            Conversation(rowID: 0, id: "", kind: $0.conversation.kind, name: $0.conversation.name).displayName
        }
        return ClosestNames.closest(to: name, among: names)
    }

    package func conversationRowIDs() throws -> Set<Int64> {
        Set(try link.query("SELECT id FROM conversation").map { try $0.int("id") })
    }

    package func conversationRowIDs(workspace teamID: String) throws -> Set<Int64> {
        Set(try allConversations().map(\.conversation).filter { $0.workspaceID == teamID }.map(\.rowID))
    }

    /// Counts per conversation, computed from the message table (no kept counts in this slice).
    ///
    /// - Complexity: O(n) over the messages (an index-only scan of the primary key where PostgreSQL can).
    package func conversationSummaries() throws -> [ConversationSummary] {
        let counts = try link.query(
            """
            SELECT conversation_id, count(*) FILTER (WHERE NOT is_deleted) AS messages,
                min(ts_key) AS first_key, max(ts_key) AS last_key
            FROM message GROUP BY conversation_id
            """)
        var byConversation: [Int64: (Int, Int64, Int64)] = [:]
        for row in counts {
            byConversation[try row.int("conversation_id")] =
                (Int(try row.int("messages")), try row.int("first_key"), try row.int("last_key"))
        }
        let order: [ConversationKind: Int] = [.channel: 0, .private: 1, .mpim: 2, .dm: 3]
        return try allConversations().map(\.conversation).sorted {
            bytesBefore((order[$0.kind] ?? 3, $0.name), (order[$1.kind] ?? 3, $1.name))
        }.map { conversation in
            let count = byConversation[conversation.rowID]
            return ConversationSummary(
                conversation: conversation, messages: count?.0 ?? 0, firstSeconds: count.map { $0.1 / 1_000_000 },
                lastSeconds: count.map { $0.2 / 1_000_000 }, syncedTS: nil, syncInterrupted: false)
        }
    }

    package func messageCountsByConversation() throws -> [Int64: Int] {
        var out: [Int64: Int] = [:]
        for row in try link.query(
            "SELECT conversation_id, count(*) AS messages FROM message WHERE NOT is_deleted GROUP BY conversation_id")
        {
            out[try row.int("conversation_id")] = Int(try row.int("messages"))
        }
        return out
    }

    /// Every user, placeholders included.
    func allUsers() throws -> [(user: User, teamID: String?, timeZone: String?)] {
        try directory.users { try loadUsers() }
    }

    private func loadUsers() throws -> [(user: User, teamID: String?, timeZone: String?)] {
        try link.query(
            """
            SELECT id, handle, real_name, display_name, is_bot, is_deleted, is_placeholder, team_id, time_zone
            FROM slack_user ORDER BY id
            """
        ).map { row in
            (
                User(
                    id: try row.string("id"), handle: try row.string("handle"),
                    realName: try row.optionalString("real_name"), displayName: try row.optionalString("display_name"),
                    isBot: try row.bool("is_bot"), isDeleted: try row.bool("is_deleted"),
                    isPlaceholder: try row.bool("is_placeholder")),
                try row.optionalString("team_id"), try row.optionalString("time_zone")
            )
        }
    }

    /// Users after `afterID` in id order (byte order, as SQLite's), at most `limit`.
    package func usersPage(after afterID: String?, limit: Int) throws -> [ArchivedUser] {
        let after = afterID ?? ""
        return try allUsers().filter { after.utf8.lexicographicallyPrecedes($0.user.id.utf8) }
            .sorted { $0.user.id.utf8.lexicographicallyPrecedes($1.user.id.utf8) }.prefix(max(0, limit))
            .map { ArchivedUser(user: $0.user, teamID: $0.teamID, timeZone: $0.timeZone) }
    }

    package func archivedUser(id: String) throws -> ArchivedUser? {
        try archivedUsers(ids: [id])[id]
    }

    package func archivedUsers(ids: Set<String>) throws -> [String: ArchivedUser] {
        guard !ids.isEmpty else { return [:] }
        var out: [String: ArchivedUser] = [:]
        for user in try allUsers() where ids.contains(user.user.id) {
            out[user.user.id] = ArchivedUser(user: user.user, teamID: user.teamID, timeZone: user.timeZone)
        }
        return out
    }

    package func users(matching name: String) throws -> [User] {
        try allUsers().map(\.user).filter { user in
            user.id == name || Self.sameIgnoringCase(user.handle, name)
                || [user.displayName, user.realName].contains { $0.map { Self.sameIgnoringCase($0, name) } == true }
        }.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }

    package func users(withNamePrefix prefix: String) throws -> [User] {
        try allUsers().map(\.user).filter { user in
            !user.isPlaceholder
                && [user.handle, user.displayName, user.realName].contains { $0.map { ClosestNames.startsWith($0, prefix) } ?? false }
        }.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }

    package func closestUserHandles(to name: String) throws -> [String] {
        var handleOf: [String: String] = [:]
        for user in try allUsers().map(\.user) where !user.isPlaceholder {
            for label in [user.handle, user.displayName, user.realName] {
                if let label, !label.isEmpty, handleOf[label] == nil { handleOf[label] = user.handle }
            }
        }
        var handles: [String] = []
        for label in ClosestNames.closest(to: name, among: handleOf.keys.sorted(), limit: 6) {
            if let handle = handleOf[label], !handles.contains("@" + handle) { handles.append("@" + handle) }
        }
        return Array(handles.prefix(3))
    }

    package func handles(of ids: some Collection<String>) throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        var out: [String: String] = [:]
        let rows = try link.query(
            "SELECT id, handle FROM slack_user WHERE id = ANY($1)", .of(Array(Set(ids))))
        for row in rows { out[try row.string("id")] = try row.string("handle") }
        return out
    }

    package func nameDirectory() throws -> NameDirectory {
        var names = NameDirectory()
        for user in try allUsers() { names.addUser(user.user) }
        for row in try link.query("SELECT slack_id, name FROM conversation ORDER BY id") {
            names.addChannel(id: try row.string("slack_id"), name: try row.string("name"))
        }
        return names
    }

    /// User id → shown name, for timeline pages.
    func userNames() throws -> [String: String] {
        try directory.names {
            var names: [String: String] = [:]
            for user in try allUsers() { names[user.user.id] = user.user.bestName }
            return names
        }
    }

    package func directConversations(of userID: String) throws -> [Int64] {
        try allConversations().map(\.conversation).filter {
            ($0.kind == .dm || $0.kind == .mpim) && $0.members.contains(userID)
        }.map(\.rowID)
    }

    package func directMessages(with other: String, me: String?) throws -> [Int64] {
        try allConversations().map(\.conversation).filter { conversation in
            guard conversation.kind == .dm, conversation.members.contains(other) else { return false }
            if let me, me != other, !conversation.members.contains(me) { return false }
            return true
        }.map(\.rowID)
    }

    package func workspace() throws -> WorkspaceInfo? { try workspaces().first }

    package func workspaces() throws -> [WorkspaceInfo] {
        try link.query("SELECT team_id, name, domain FROM workspace ORDER BY id").map {
            WorkspaceInfo(teamID: try $0.string("team_id"), name: try $0.optionalString("name"), domain: try $0.optionalString("domain"))
        }
    }

    /// Counts for the whole archive or one conversation, as `SQLiteArchive.stats` defines them (messages not
    /// deleted; threads are parents; replies are messages that are not top-level).
    ///
    /// - Complexity: O(n) over the messages (one conversation: its messages).
    package func stats(conversation: Conversation?) throws -> ArchiveStats {
        var (stats, posters) = try counts(conversations: conversation.map { [$0.rowID] }, team: nil)
        if let conversation {
            stats.conversation = conversation.displayName
            stats.conversationID = conversation.id
            stats.conversations = 1
            stats.posters = posters
        }
        return stats
    }

    /// Counts for one workspace, as `SQLiteArchive.stats(workspace:)` defines them: its conversations' messages,
    /// its conversations by kind, its team's users.
    ///
    /// - Complexity: O(m) over the workspace's messages.
    package func stats(workspace: WorkspaceInfo) throws -> ArchiveStats {
        let ids = try conversationRowIDs(workspace: workspace.teamID).sorted()
        var (stats, _) = try counts(conversations: ids, team: workspace.teamID)
        stats.workspace = workspace.shownName
        stats.workspaceID = workspace.teamID
        return stats
    }

    /// The counts of `stats` over the messages of `conversations` (nil: all of them), and their posters; with
    /// `team`, the conversations by kind are those of `conversations` and the users those of that team.
    private func counts(conversations: [Int64]?, team: String?) throws -> (ArchiveStats, posters: Int) {
        let scope = conversations == nil ? "" : "WHERE conversation_id = ANY($1)"
        let binds: PostgresBindings = conversations.map { .of($0) } ?? PostgresBindings()
        let parent = MessageFlags.threadParent.rawValue
        let top = MessageFlags.topLevel.rawValue
        let counts = try link.query(
            """
            SELECT count(*) FILTER (WHERE NOT is_deleted) AS messages,
                count(*) FILTER (WHERE is_deleted) AS deleted,
                count(*) FILTER (WHERE NOT is_deleted AND (flags & \(parent)) <> 0) AS threads,
                count(*) FILTER (WHERE NOT is_deleted AND (flags & \(top)) = 0) AS replies,
                min(ts_key) AS first_key, max(ts_key) AS last_key,
                count(DISTINCT user_id) FILTER (WHERE NOT is_deleted) AS posters
            FROM message \(scope)
            """, binds)
        let row = counts.first
        func count(_ column: String) throws -> Int { Int(try row?.int(column) ?? 0) }
        var kinds: [String: Int] = [:]
        for kind in ConversationKind.allCases { kinds[kind.rawValue] = 0 }
        let kindScope = team == nil ? "" : "WHERE id = ANY($1)"
        for pair in try link.query(
            "SELECT kind, count(*) AS count FROM conversation \(kindScope) GROUP BY kind",
            team == nil ? PostgresBindings() : binds)
        {
            kinds[try pair.string("kind")] = Int(try pair.int("count"))
        }
        let users = try allUsers().filter { team == nil || $0.teamID == team }.map(\.user)
        let first = try row?.optionalInt("first_key")
        let last = try row?.optionalInt("last_key")
        let stats = ArchiveStats(
            messages: try count("messages"), deletedMessages: try count("deleted"), threads: try count("threads"),
            replies: try count("replies"), conversations: kinds.values.reduce(0, +), conversationsByKind: kinds,
            users: users.filter { !$0.isPlaceholder }.count, placeholderUsers: users.filter(\.isPlaceholder).count,
            firstSeconds: first.map { $0 / 1_000_000 }, lastSeconds: last.map { $0 / 1_000_000 },
            databaseBytes: fileSize)
        return (stats, try count("posters"))
    }
}

/// Byte order (SQLite's BINARY collation), not the database's collation: both backends sort names alike.
private func bytesBefore(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

private func bytesBefore(_ a: (String, String), _ b: (String, String)) -> Bool {
    a.0 != b.0 ? bytesBefore(a.0, b.0) : bytesBefore(a.1, b.1)
}

private func bytesBefore(_ a: (Int, String), _ b: (Int, String)) -> Bool {
    a.0 != b.0 ? a.0 < b.0 : bytesBefore(a.1, b.1)
}
