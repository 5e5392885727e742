import Foundation
import SlackIndex

extension ArchiveTools {
    /// `messages_around`: the page of the conversation centred on a message, the message marked; a reply opens
    /// its thread around it (as `slackindex history` does).
    ///
    /// - Complexity: O(log n + limit) (`Timeline`).
    func messagesAround(_ arguments: ToolArguments, token: APIToken) throws -> String {
        let zone = try timeZone(token)
        let (conversation, target) = try message(arguments, token: token, zone: zone)
        let limit = try arguments.limit(.messagesAround)
        let page: TimelinePage
        var title = "Messages around ts \(target.ts) in \(conversation.displayName)"
        if !target.flags.contains(.topLevel), let threadTS = target.threadTS {
            page = try timeline.thread(conversation, threadTS: threadTS, at: .around(target.tsKey), limit: limit)
            title += " (a reply: its thread around it)"
        } else {
            page = try timeline.history(conversation, at: .around(target.tsKey), limit: limit)
        }
        let text = try messageText(page.messages, format: try arguments.format(), zone: zone)
        var lines = [title + ", oldest first; ▶ marks it:"] + text.page(page.messages, marked: target.tsKey)
        let more = page.previous?.threadTS == nil && page.next?.threadTS == nil
            ? "history with conversation \"\(conversation.id)\" and" : "thread with"
        if let previous = page.previous { lines.append("Older: ask \(more) cursor \"\(previous)\".") }
        if let next = page.next { lines.append("Newer: ask \(more) cursor \"\(next)\".") }
        return lines.joined(separator: "\n")
    }

    /// `history`: a conversation between two dates. With `after` it reads forward from there (oldest first, the
    /// cursor continues newer); without, the newest page before `before` (or now) and the cursor continues older.
    /// Messages past the other bound are left out, and then no cursor is given.
    ///
    /// - Throws: `ToolError` for an unknown conversation, a bad date, or a cursor of another conversation.
    /// - Complexity: O(log n + limit) at any depth (keyset pages).
    func history(_ arguments: ToolArguments, token: APIToken) throws -> String {
        let zone = try timeZone(token)
        let named = try conversation(
            try arguments.required("conversation", example: "\"#general\""), token: token)
        let after = try arguments.point("after", timeZone: zone, now: now())?.tsKey
        let before = try arguments.point("before", timeZone: zone, now: now())?.tsKey
        let limit = try arguments.limit(.history)
        let forward: Bool
        var page: TimelinePage
        if let text = try arguments.string("cursor") {
            let (cursor, conversation) = try self.cursor(text, token: token)
            guard conversation.id == named.id, cursor.threadTS == nil else {
                throw ToolError.cursorElsewhere(
                    cursor.threadTS == nil ? conversation.displayName : "a thread (use it with the thread tool)")
            }
            forward = cursor.direction == .after
            page = try timeline.page(cursor, limit: limit)
        } else {
            forward = after != nil
            let anchor: TimelineAnchor = after.map { .after($0) } ?? before.map { .before($0) } ?? .newest
            page = try timeline.history(named, at: anchor, limit: limit)
        }
        let kept = page.messages.filter { m in
            (after.map { m.tsKey >= $0 } ?? true) && (before.map { m.tsKey < $0 } ?? true)
        }
        let ended = kept.count < page.messages.count
        let text = try messageText(kept, format: try arguments.format(), zone: zone)
        var lines = ["\(named.displayName) (\(named.id)), \(kept.count) messages, oldest first:"] + text.page(kept)
        if kept.isEmpty { lines.append("(no messages here)") }
        let continuation = ended ? nil : forward ? page.next : page.previous
        if let continuation {
            lines.append("More \(forward ? "newer" : "older") messages; ask with cursor \"\(continuation)\".")
        } else {
            lines.append(forward ? "That is the newest message in range." : "That is the oldest message in range.")
        }
        return lines.joined(separator: "\n")
    }

    /// `thread`: the parent and its replies in order, by any message of the thread; the cursor continues with
    /// later replies.
    ///
    /// - Complexity: O(log n + limit).
    func thread(_ arguments: ToolArguments, token: APIToken) throws -> String {
        let zone = try timeZone(token)
        let limit = try arguments.limit(.thread)
        let page: TimelinePage
        if let text = try arguments.string("cursor") {
            let (cursor, _) = try self.cursor(text, token: token)
            guard cursor.threadTS != nil else {
                throw ToolError.cursorElsewhere("a history (use it with the history tool)")
            }
            page = try timeline.page(cursor, limit: limit)
        } else {
            let (conversation, target) = try message(arguments, token: token, zone: zone)
            page = try timeline.thread(conversation, threadTS: target.threadTS ?? target.ts, limit: limit)
        }
        let text = try messageText(page.messages, format: try arguments.format(), zone: zone)
        let parent = page.messages.first { $0.threadTS == nil || $0.threadTS == $0.ts }
        var lines = ["Thread in \(page.conversation.displayName), oldest first:"] + text.page(page.messages)
        if let next = page.next {
            let left = parent.map { max(0, $0.replyCount + 1 - page.messages.count) }
            let count = left.map { "\($0) more replies" } ?? "More replies"
            lines.append("\(count); ask with cursor \"\(next)\".")
        }
        return lines.joined(separator: "\n")
    }
}
