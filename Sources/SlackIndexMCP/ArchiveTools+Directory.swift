import Foundation
import SlackIndex

extension ArchiveTools {
    /// `conversations`: the conversations the viewer sees, in id order, filtered by part of the name and by
    /// kind, with member and message counts; the cursor continues after the last id.
    ///
    /// - Complexity: O(c × members) over the c visible conversations (the name filter runs on them).
    func conversations(_ arguments: ToolArguments, token: APIToken) throws -> String {
        let needle = try arguments.string("name").map { $0.hasPrefix("#") ? String($0.dropFirst()) : $0 }
        let kinds = ConversationKind.allCases.map(\.rawValue)
        let kind = try arguments.string("kind").map { _ in try arguments.choice("kind", kinds, default: "") }
        let limit = try arguments.limit(.conversations)
        let after = try arguments.string("cursor").map { try OpaqueCursor.parts($0, kind: "c1").joined() }
        let matching = try allVisibleConversations(token).filter { c in
            (kind == nil || c.kind.rawValue == kind) && (after.map { c.id > $0 } ?? true)
                && (needle.map { c.name.lowercased().contains($0.lowercased()) || ClosestNames.startsWith(c.name, $0) }
                    ?? true)
        }
        let counts = try archive.messageCountsByConversation()
        var lines = matching.prefix(limit).map { c -> String in
            var line = "\(c.displayName)  \(c.id)  \(c.kind.rawValue)  \(c.members.count) members  "
                + "\(counts[c.rowID] ?? 0) messages"
            if c.isArchived { line += "  (archived)" }
            if let topic = c.topic, !topic.isEmpty { line += "  topic: " + MessageRenderer.oneLine(topic, width: 120) }
            return line
        }
        if lines.isEmpty { lines = ["No conversation you can see matches."] }
        if matching.count > limit, let last = matching.prefix(limit).last {
            let next = OpaqueCursor.make(["c1", last.id])
            lines.append("\(matching.count - limit) more; ask with cursor \"\(next)\" (and the same name and kind).")
        }
        return lines.joined(separator: "\n")
    }

    /// `users`: people by name, fuzzily (whole name, start of one, then close spellings), or everyone in id
    /// order. People are not private: everyone the archive knows is listed, as `users.list` does in `serve`.
    ///
    /// - Complexity: O(users).
    func users(_ arguments: ToolArguments) throws -> String {
        let limit = try arguments.limit(.users)
        var found: [User]
        var more = 0
        var next: String?
        if let name = try arguments.string("name") {
            let bare = name.hasPrefix("@") ? String(name.dropFirst()) : name
            found = try archive.users(matching: bare) + archive.users(withNamePrefix: bare)
            for handle in try archive.closestUserHandles(to: bare) {
                found += try archive.users(matching: String(handle.dropFirst()))
            }
            var seen = Set<String>()
            found = found.filter { seen.insert($0.id).inserted }
            more = max(0, found.count - limit)
            found = Array(found.prefix(limit))
        } else {
            let after = try arguments.string("cursor").map { try OpaqueCursor.parts($0, kind: "u1").joined() }
            let page = try archive.usersPage(after: after, limit: limit + 1).map(\.user)
            found = Array(page.prefix(limit))
            if page.count > limit, let last = found.last { next = OpaqueCursor.make(["u1", last.id]) }
        }
        let zones = try archive.archivedUsers(ids: Set(found.map(\.id)))
        var lines = found.map { user -> String in
            var line = "@\(user.handle)  \(user.id)"
            let names = [user.realName, user.displayName].compactMap { $0 }.filter { !$0.isEmpty && $0 != user.handle }
            if !names.isEmpty { line += "  " + Array(Set(names)).sorted().joined(separator: " / ") }
            if let zone = zones[user.id]?.timeZone { line += "  \(zone)" }
            if user.isBot { line += "  (bot)" }
            if user.isDeleted { line += "  (deactivated)" }
            return line
        }
        if lines.isEmpty { lines = ["Nobody by that name; try part of it."] }
        if more > 0 { lines.append("\(more) more match: give more of the name, or a larger limit.") }
        if let next { lines.append("More people; ask with cursor \"\(next)\".") }
        return lines.joined(separator: "\n")
    }

    /// `archive_facts`: workspaces, the viewer and their time zone, the conversations they see by kind, the
    /// messages in them, the oldest and newest of those, and how many people the archive knows.
    ///
    /// - Complexity: O(c log n) over the visible conversations.
    func facts(token: APIToken) throws -> String {
        let zone = try timeZone(token)
        let visible = try allVisibleConversations(token)
        let ids = Set(visible.map(\.rowID))
        let counts = try archive.messageCountsByConversation()
        let bounds = try archive.messageTimeBounds(conversations: ids)
        let stats = try archive.stats()
        let me = try archive.archivedUser(id: token.userID)
        var lines = try archive.workspaces().map { w in
            "Workspace: \(w.name ?? w.teamID)" + (w.domain.map { " (\($0).slack.com)" } ?? "") + "  \(w.teamID)"
        }
        lines.append(
            "You: " + (me.map { "@\($0.user.handle) (\(token.userID))" } ?? token.userID) + ", time zone "
                + zone.identifier + (token.isAdmin ? "; an admin token: every conversation" : ""))
        let byKind = ConversationKind.allCases.map { kind in
            "\(kind.rawValue) \(visible.filter { $0.kind == kind }.count)"
        }
        lines.append("Conversations you can see: \(visible.count) (\(byKind.joined(separator: ", ")))")
        lines.append("Messages in them: \(ids.reduce(0) { $0 + (counts[$1] ?? 0) })")
        if let first = bounds.first, let last = bounds.last {
            lines.append(
                "Oldest / newest message: \(Day.localMinute(first / 1_000_000, in: zone)) / "
                    + Day.localMinute(last / 1_000_000, in: zone))
        }
        lines.append("People: \(stats.users) (+\(stats.placeholderUsers) known only from their messages)")
        return lines.joined(separator: "\n")
    }
}

/// The cursors of list answers: URL-safe base64 of space-separated parts, the first naming the list.
enum OpaqueCursor {
    static func make(_ parts: [String]) -> String {
        Data(parts.joined(separator: " ").utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The parts after `kind`.
    ///
    /// - Throws: `ToolError.badCursor` for text `make` did not write for `kind`.
    static func parts(_ text: String, kind: String) throws -> [String] {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { throw ToolError.badCursor(argument: "cursor") }
        let parts = String(decoding: data, as: UTF8.self).split(separator: " ").map(String.init)
        guard parts.first == kind, parts.count > 1 else { throw ToolError.badCursor(argument: "cursor") }
        return Array(parts.dropFirst())
    }
}
