import Foundation
import SlackIndex

/// Methods of slackindex's own (not Slack's) that the web UI reads: the sidebar in one call and the timeline in
/// both directions and around a message. They sit behind the same token check and access rules as Slack's
/// methods: a conversation the token may not see answers `channel_not_found`.
extension SlackAPI {
    /// The largest `slackindex.timeline` page.
    static let maximumTimelinePage = 200

    /// `slackindex.conversations`: every conversation the token sees (all kinds), with its message count; DMs and
    /// group DMs with their members so the UI can name them; the archive's workspaces (`[{"id", "name"}]`), for
    /// the UI's workspace switcher when there are several.
    ///
    /// - Complexity: O(c × members) for the c visible conversations.
    func uiConversations(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let listings = try archive.visibleConversations(
            to: request.token, kinds: [.channel, .private, .dm, .mpim], excludeArchived: false, after: nil,
            limit: Int.max)
        let counts = try archive.messageCountsByConversation()
        let objects = listings.map { SlackAPI.uiConversation($0.conversation, count: counts[$0.conversation.rowID] ?? 0) }
        let named = listings.lazy.map(\.conversation).filter { $0.kind == .dm || $0.kind == .mpim }.flatMap(\.members)
        let workspaces = try archive.workspaces().map { w in
            JSONValue.object([("id", .string(w.teamID)), ("name", .string(w.shownName))])
        }
        return [
            ("conversations", .array(objects)), ("users", try uiUsers(Set(named))), ("workspaces", .array(workspaces)),
        ]
    }

    /// A conversation as the UI's sidebar knows it (`count`, its messages, when given; `workspace` where another
    /// workspace holds the same name; `workspace_id`, its team id, when known); DMs and group DMs with their
    /// members so the UI can name them.
    static func uiConversation(_ c: Conversation, count: Int?) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(c.id)), ("kind", .string(c.kind.rawValue)), ("name", .string(c.name)),
        ]
        if let workspace = c.workspace { members.append(("workspace", .string(workspace))) }
        if let team = c.workspaceID { members.append(("workspace_id", .string(team))) }
        if let count { members.append(("count", .int(count))) }
        members.append(("is_archived", .bool(c.isArchived)))
        if c.kind == .dm || c.kind == .mpim {
            members.append(("members", .array(c.members.map { .string($0) })))
        }
        return .object(members)
    }

    /// The names of the users `ids` names that the archive knows, for the UI to show without the whole member
    /// list: `{"U1": {"name": handle, "label": the name people see, "bot": true|false}, …}`.
    ///
    /// - Complexity: O(k log n) for k ids.
    func uiUsers(_ ids: Set<String>) throws -> JSONValue {
        let users = try archive.archivedUsers(ids: ids)
        return .object(
            users.values.sorted { $0.user.id < $1.user.id }.map { archived in
                let user = archived.user
                return (
                    user.id,
                    .object([("name", .string(user.handle)), ("label", .string(user.bestName)), ("bot", .bool(user.isBot))])
                )
            })
    }

    /// The user ids a message's JSON names: its author, `<@U…>` mentions, reactions' and replies' users, a
    /// DM's members: every `U…` or `W…` id of 3 to 31 capitals and digits that opens a JSON string or follows
    /// `@`, and ends the string or the mention (`"`, `>`, `|`). Ids the archive does not know are dropped later.
    ///
    /// - Complexity: O(bytes).
    static func userIDs(inJSON text: String, into ids: inout Set<String>) {
        let bytes = Array(text.utf8)
        var i = 1
        while i < bytes.count {
            defer { i += 1 }
            let b = bytes[i]
            guard b == UInt8(ascii: "U") || b == UInt8(ascii: "W"),
                bytes[i - 1] == UInt8(ascii: "\"") || bytes[i - 1] == UInt8(ascii: "@")
            else { continue }
            var end = i + 1
            while end < bytes.count, end - i < 32,
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[end])
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end])
            {
                end += 1
            }
            guard end - i >= 3, end - i < 32, end < bytes.count,
                [UInt8(ascii: "\""), UInt8(ascii: ">"), UInt8(ascii: "|")].contains(bytes[end])
            else { continue }
            ids.insert(String(decoding: bytes[i..<end], as: UTF8.self))
            i = end
        }
    }

    /// `slackindex.timeline`: a page of a conversation's channel view, oldest to newest, with a cursor each way.
    ///
    /// One of: `cursor` (from a previous page's `before` or `after`), `around` (a ts: the page holds half a page at
    /// or before it and half after it, and `anchor` names the first message at or after it, else the last one), or
    /// neither (the newest page). `limit` defaults to 50 (at most 200). `before`/`after` continue the page
    /// outwards and are empty at either end (a page read by cursor gives only the cursor of its own direction).
    /// - Throws: `channel_not_found` as `conversations.history`; `invalid_cursor` for a cursor of another
    ///   conversation or of a thread.
    /// - Complexity: O(log n + limit) at any depth (keyset pages, never OFFSET).
    func uiTimeline(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let conversation = try visibleConversation(request)
        let limit = try request.limit(default: 50, maximum: SlackAPI.maximumTimelinePage)
        var messages: [Message]
        var moreBefore = false
        var moreAfter = false
        var anchor: String?
        if let text = request.string("cursor") {
            guard let cursor = try? TimelineCursor(parsing: text), cursor.conversationID == conversation.id,
                cursor.threadTS == nil
            else { throw APIFailure.invalidCursor }
            messages = try archive.page(
                conversation: conversation, scope: .history, direction: cursor.direction, from: cursor.position,
                limit: limit + 1)
            if messages.count > limit {
                if cursor.direction == .before { messages.removeFirst() } else { messages.removeLast() }
                if cursor.direction == .before { moreBefore = true } else { moreAfter = true }
            }
        } else if let around = try request.timestamp("around") {
            let half = max(1, limit / 2)
            let at = TimelinePosition(tsKey: around.key, rowID: Int64.max)
            var older = try archive.page(
                conversation: conversation, scope: .history, direction: .before, from: at, limit: half + 1)
            var newer = try archive.page(
                conversation: conversation, scope: .history, direction: .after, from: at, limit: half + 1)
            if older.count > half { older.removeFirst(); moreBefore = true }
            if newer.count > half { newer.removeLast(); moreAfter = true }
            messages = older + newer
            anchor = (messages.first { $0.tsKey >= around.key } ?? messages.last)?.ts
        } else {
            messages = try archive.page(
                conversation: conversation, scope: .history, direction: .before, from: nil, limit: limit + 1)
            if messages.count > limit { messages.removeFirst(); moreBefore = true }
        }
        func cursor(_ message: Message?, _ direction: Archive.PageDirection, _ more: Bool) -> JSONValue {
            guard more, let message else { return .string("") }
            return .string(
                TimelineCursor(
                    conversationID: conversation.id, threadTS: nil, direction: direction,
                    position: TimelinePosition(tsKey: message.tsKey, rowID: message.rowID)
                ).description)
        }
        let json = try renderedJSON(messages)
        var named = Set(conversation.kind == .dm || conversation.kind == .mpim ? conversation.members : [])
        for text in json { SlackAPI.userIDs(inJSON: text, into: &named) }
        return [
            ("messages", .array(json.map { .raw($0) })),
            // What the first page needs to be shown before the sidebar and the member list have arrived.
            ("conversation", SlackAPI.uiConversation(conversation, count: nil)),
            ("users", try uiUsers(named)),
            ("before", cursor(messages.first, .before, moreBefore)),
            ("after", cursor(messages.last, .after, moreAfter)),
            ("anchor", .string(anchor)),
            // Which of these messages' files `slackindex files` stored (served at /files/ID): id → content type.
            (
                "stored_files",
                .object(
                    try archive.storedFileTypes(messageIDs: messages.map(\.rowID)).sorted { $0.key < $1.key }
                        .map { ($0.key, .string($0.value)) })
            ),
            // Which of them have a stored thumbnail (served at /files/ID?thumb=1).
            (
                "stored_thumbs",
                .array(try archive.storedThumbnails(messageIDs: messages.map(\.rowID)).sorted().map { .string($0) })
            ),
        ]
    }

    /// `slackindex.images`: the workspace's stored avatars and custom emoji, served at `/avatars/{user id}` and
    /// `/emoji/{name}`: `{"avatars": {"U1": "/avatars/U1?v=…"}, "emoji": {"party": "/emoji/party?v=…"},
    /// "emoji_aliases": {"thumbs": "+1"}}`. Aliases of a stored custom emoji are in `emoji` (their image's URL);
    /// aliases of a standard emoji in `emoji_aliases`. `v` is the image's hash: a new picture is a new URL.
    ///
    /// - Complexity: O(avatars + emoji).
    func uiImages(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let images = try archive.storedImages()
        func url(_ prefix: String, _ key: String, _ sha: String) -> JSONValue {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            return .string(prefix + (key.addingPercentEncoding(withAllowedCharacters: allowed) ?? key) + "?v=" + sha.prefix(12))
        }
        return [
            ("avatars", .object(images.avatars.sorted { $0.key < $1.key }.map { ($0.key, url("/avatars/", $0.key, $0.value)) })),
            ("emoji", .object(images.emoji.sorted { $0.key < $1.key }.map { ($0.key, url("/emoji/", $0.key, $0.value)) })),
            ("emoji_aliases", .object(images.standardAliases.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
        ]
    }
}
