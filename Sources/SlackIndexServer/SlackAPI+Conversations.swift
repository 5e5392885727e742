import Foundation
import SlackIndex

extension SlackAPI {
    /// Slack's `types` names for the archive's kinds.
    static let kindsByType: [String: ConversationKind] = [
        "public_channel": .channel, "private_channel": .private, "mpim": .mpim, "im": .dm,
    ]

    /// `conversations.list`: the conversations the token sees, in id order; `types` (default `public_channel`),
    /// `exclude_archived`, `limit` (default 100, at most 1000), cursor paging; `team_id`, one workspace's.
    ///
    /// - Complexity: O(log n + limit × members); with `team_id`, O(c × members) over the visible conversations
    ///   after the cursor (an archive holds thousands at most).
    func conversationsList(_ request: APIRequest) throws -> [(String, JSONValue)] {
        var kinds = Set<ConversationKind>()
        for type in (request.string("types") ?? "public_channel").split(separator: ",") {
            let name = type.trimmingCharacters(in: .whitespaces)
            guard let kind = SlackAPI.kindsByType[name] else { throw APIFailure(code: "invalid_types") }
            kinds.insert(kind)
        }
        let limit = try request.limit(default: 100, maximum: 1000)
        let after = try ListCursor.parse(request.string("cursor"), list: "conversations")
        let workspace = try workspaceFilter(request)
        var listings = try archive.visibleConversations(
            to: request.token, kinds: kinds, excludeArchived: request.bool("exclude_archived"), after: after,
            limit: workspace == nil ? limit + 1 : Int.max)
        if let workspace {
            let inWorkspace = listings.filter { workspace.conversations.contains($0.conversation.rowID) }
            listings = Array(inWorkspace.prefix(limit + 1))
        }
        let hasMore = listings.count > limit
        if hasMore { listings.removeLast() }
        let next =
            hasMore ? listings.last.map { ListCursor.make("conversations", after: $0.conversation.id) } ?? "" : ""
        return [
            ("channels", .array(listings.map { SlackAPI.channelObject($0, for: request.token) })),
            ("response_metadata", .object([("next_cursor", .string(next))])),
        ]
    }

    /// The workspace `team_id` names (Slack's parameter of `conversations.list` and `search.messages`: a team id; a
    /// domain or name works too), nil without it.
    ///
    /// - Throws: `team_not_found` for a workspace the archive does not hold (the error Slack's `team.info` gives).
    /// - Complexity: O(w + c) for w workspaces and c conversations.
    func workspaceFilter(_ request: APIRequest) throws -> WorkspaceFilter? {
        guard let team = request.string("team_id"), !team.isEmpty else { return nil }
        do {
            return try WorkspaceFilter(team, in: archive)
        } catch is WorkspaceError {
            throw APIFailure(code: "team_not_found")
        }
    }

    /// `conversations.info`: one conversation the token sees.
    ///
    /// - Complexity: O(log n + members).
    func conversationsInfo(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let id = try request.required("channel")
        guard let listing = try archive.visibleConversation(id: id, to: request.token) else {
            throw APIFailure.channelNotFound
        }
        return [("channel", SlackAPI.channelObject(listing, for: request.token))]
    }

    /// The `channel` argument as a conversation the token may see.
    ///
    /// - Throws: `invalid_arguments` without a channel; `channel_not_found` for one that does not exist or that
    ///   the token may not see (the same answer, so tokens cannot probe for private conversations).
    func visibleConversation(_ request: APIRequest) throws -> Conversation {
        let id = try request.required("channel")
        guard let listing = try archive.visibleConversation(id: id, to: request.token) else {
            throw APIFailure.channelNotFound
        }
        return listing.conversation
    }

    /// A Slack conversation object.
    static func channelObject(_ listing: ConversationListing, for token: APIToken) -> JSONValue {
        let c = listing.conversation
        var members: [(String, JSONValue)] = [("id", .string(c.id))]
        if c.kind != .dm { members.append(("name", .string(c.name))) }
        members += [
            ("is_channel", .bool(c.kind == .channel || c.kind == .private)),
            ("is_group", .bool(c.kind == .mpim || (c.kind == .private && c.id.hasPrefix("G")))),
            ("is_im", .bool(c.kind == .dm)),
            ("is_mpim", .bool(c.kind == .mpim)),
            ("is_private", .bool(c.kind != .channel)),
            ("is_archived", .bool(c.isArchived)),
            ("created", .int(listing.created ?? 0)),
        ]
        if c.kind == .dm {
            let other = c.members.first { $0 != token.userID } ?? c.members.first ?? ""
            members.append(("user", .string(other)))
        } else {
            members += [
                ("is_member", .bool(c.members.contains(token.userID))),
                ("num_members", .int(c.members.count)),
                ("topic", .object([("value", .string(c.topic ?? "")), ("creator", .string("")), ("last_set", .int(0))])),
                (
                    "purpose",
                    .object([("value", .string(c.purpose ?? "")), ("creator", .string("")), ("last_set", .int(0))])
                ),
            ]
        }
        return .object(members)
    }

    /// `conversations.history`: the channel view newest first (top-level messages, thread parents, thread
    /// broadcasts; no plain replies, no deleted messages).
    ///
    /// `latest` and `oldest` are exact ts bounds, exclusive unless `inclusive` is true; `limit` defaults to 100
    /// (at most 1000). The cursor is a keyset position (`TimelineCursor`), so pages stay right while messages
    /// are added behind them; clients send the same bounds with each cursor, as Slack's do.
    /// - Complexity: O(log n + limit), at any depth.
    func history(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let conversation = try visibleConversation(request)
        let limit = try request.limit(default: 100, maximum: 1000)
        let inclusive = request.bool("inclusive")
        let oldest = try request.timestamp("oldest")
        let latest = try request.timestamp("latest")
        var position = latest.map { TimelinePosition(tsKey: $0.key, rowID: inclusive ? Int64.max : Int64.min) }
        if let text = request.string("cursor") {
            guard let cursor = try? TimelineCursor(parsing: text), cursor.conversationID == conversation.id,
                cursor.threadTS == nil, cursor.direction == .before
            else { throw APIFailure.invalidCursor }
            position = cursor.position
        }
        // Oldest to newest; one more than a page tells whether there is more.
        var messages = try archive.page(
            conversation: conversation, scope: .history, direction: .before, from: position, limit: limit + 1)
        if let oldest {
            messages.removeAll { inclusive ? $0.tsKey < oldest.key : $0.tsKey <= oldest.key }
        }
        messages.reverse()
        let hasMore = messages.count > limit
        if hasMore { messages.removeLast() }
        let next =
            hasMore
            ? messages.last.map {
                TimelineCursor(
                    conversationID: conversation.id, threadTS: nil, direction: .before,
                    position: TimelinePosition(tsKey: $0.tsKey, rowID: $0.rowID)
                ).description
            } ?? "" : ""
        return [
            ("messages", .array(try rendered(messages))),
            ("has_more", .bool(hasMore)),
            ("pin_count", .int(0)),
            ("channel_actions_ts", .null),
            ("channel_actions_count", .int(0)),
            ("response_metadata", .object([("next_cursor", .string(next))])),
        ]
    }

    /// `conversations.replies`: a thread, its parent first on every page, then replies oldest first.
    ///
    /// `ts` may name the parent or any reply (the whole thread is read). `oldest`/`latest`/`inclusive` bound the
    /// replies as in `history`; `limit` (default 1000, at most 1000) counts the replies of a page.
    /// - Throws: `thread_not_found` when the conversation has no such message (or it was deleted).
    /// - Complexity: O(log n + limit).
    func replies(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let conversation = try visibleConversation(request)
        let tsText = try request.required("ts")
        guard let key = SlackTimestamp.parseKey(tsText), let found = try archive.message(conversation: conversation, tsKey: key),
            !found.isDeleted
        else { throw APIFailure(code: "thread_not_found") }
        var parent = found
        if let threadTS = found.threadTS, threadTS != found.ts {
            guard let parentKey = SlackTimestamp.parseKey(threadTS),
                let root = try archive.message(conversation: conversation, tsKey: parentKey), !root.isDeleted
            else { throw APIFailure(code: "thread_not_found") }
            parent = root
        }
        let limit = try request.limit(default: 1000, maximum: 1000)
        let inclusive = request.bool("inclusive")
        let oldest = try request.timestamp("oldest")
        let latest = try request.timestamp("latest")
        var position = TimelinePosition(tsKey: parent.tsKey, rowID: parent.rowID)
        if let oldest {
            let bound = TimelinePosition(tsKey: oldest.key, rowID: inclusive ? Int64.min : Int64.max)
            if (bound.tsKey, bound.rowID) > (position.tsKey, position.rowID) { position = bound }
        }
        if let text = request.string("cursor") {
            guard let cursor = try? TimelineCursor(parsing: text), cursor.conversationID == conversation.id,
                cursor.threadTS == parent.ts, cursor.direction == .after
            else { throw APIFailure.invalidCursor }
            position = cursor.position
        }
        var replies = try archive.page(
            conversation: conversation, scope: .thread(threadKey: parent.tsKey), direction: .after, from: position,
            limit: limit + 1)
        replies.removeAll { $0.rowID == parent.rowID }
        if let latest {
            replies.removeAll { inclusive ? $0.tsKey > latest.key : $0.tsKey >= latest.key }
        }
        let hasMore = replies.count > limit
        if hasMore { replies.removeLast() }
        let next =
            hasMore
            ? replies.last.map {
                TimelineCursor(
                    conversationID: conversation.id, threadTS: parent.ts, direction: .after,
                    position: TimelinePosition(tsKey: $0.tsKey, rowID: $0.rowID)
                ).description
            } ?? "" : ""
        return [
            ("messages", .array(try rendered([parent] + replies))),
            ("has_more", .bool(hasMore)),
            ("response_metadata", .object([("next_cursor", .string(next))])),
        ]
    }

    /// `chat.getPermalink`: Slack's link to a message the token may see.
    ///
    /// - Complexity: O(log n).
    func permalink(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let conversation = try visibleConversation(request)
        let ts = try request.required("message_ts")
        guard let key = SlackTimestamp.parseKey(ts), let message = try archive.message(conversation: conversation, tsKey: key),
            !message.isDeleted
        else { throw APIFailure(code: "message_not_found") }
        return [
            ("channel", .string(conversation.id)),
            ("permalink", .string(message.permalink ?? SlackAPI.fallbackPermalink(message))),
        ]
    }

    /// A permalink when the archive does not know the workspace's domain.
    static func fallbackPermalink(_ message: Message) -> String {
        var link = "https://slack.com/archives/\(message.conversationID)/p" + message.ts.replacingOccurrences(of: ".", with: "")
        if let thread = message.threadTS, thread != message.ts {
            link += "?thread_ts=\(thread)&cid=\(message.conversationID)"
        }
        return link
    }

    /// The messages as Slack JSON: the archived object (edits applied), with thread parents' `reply_count` and
    /// `latest_reply` brought up to the replies the archive holds.
    ///
    /// - Complexity: O(k log n) for k messages.
    func rendered(_ messages: [Message]) throws -> [JSONValue] {
        try renderedJSON(messages).map { .raw($0) }
    }

    /// `rendered`'s JSON texts.
    func renderedJSON(_ messages: [Message]) throws -> [String] {
        let raws = try archive.rawMessages(ids: messages.map(\.rowID))
        return messages.compactMap { message in raws[message.rowID].map(SlackAPI.current) }
    }

    /// The raw JSON with current thread figures (re-encoded only when they changed).
    static func current(_ raw: RawMessage) -> String {
        guard raw.isThreadParent,
            var object = (try? JSONSerialization.jsonObject(with: Data(raw.json.utf8))) as? [String: Any]
        else { return raw.json }
        let storedCount = (object["reply_count"] as? NSNumber)?.intValue
        let storedLatest = object["latest_reply"] as? String
        var changed = false
        if storedCount != raw.replyCount {
            object["reply_count"] = raw.replyCount
            changed = true
        }
        // Raised to the newest reply archived, or moved back when the stored one was deleted since.
        if let latest = raw.latestReply, latest != storedLatest,
            raw.latestReplyDeleted
                || (storedLatest.flatMap(SlackTimestamp.parseKey) ?? Int64.min) < (SlackTimestamp.parseKey(latest) ?? 0)
        {
            object["latest_reply"] = latest
            changed = true
        }
        guard changed,
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return raw.json }
        return String(decoding: data, as: UTF8.self)
    }
}
