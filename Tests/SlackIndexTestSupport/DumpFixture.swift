import Foundation
import GRDB

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexStore

/// One small workspace written in every layout the importer reads (issue 17): an official export, a tree of API
/// responses, one folder of mixed files, one file of JSON lines (and, in `DumpFixture+Slackdump`, slackdump's
/// archive and dump formats). Each must import to the same messages, threads and reply counts.
struct DumpFixture {
    struct Message {
        var channel: String
        var ts: String
        var user: String
        var text: String
        var threadTS: String?
    }

    static let users: [(id: String, name: String, realName: String)] = [
        ("U0AAAAAAAA1", "ann", "Ann Lee"), ("U0AAAAAAAA2", "bob", "Bob Stone"), ("U0AAAAAAAA3", "cat", "Cat Moss"),
    ]
    /// id, name, kind (`channel`, `private`, `dm`), members.
    static let conversations: [(id: String, name: String, kind: String, members: [String])] = [
        ("C0GENERAL01", "general", "channel", ["U0AAAAAAAA1", "U0AAAAAAAA2", "U0AAAAAAAA3"]),
        ("G0PRIVATE01", "secret", "private", ["U0AAAAAAAA1", "U0AAAAAAAA3"]),
        ("D0DIRECT001", "D0DIRECT001", "dm", ["U0AAAAAAAA1", "U0AAAAAAAA2"]),
    ]

    let messages: [Message]

    /// - Parameter perConversation: top-level messages in each conversation (6: 21 messages in all).
    init(perConversation: Int = 6) {
        var messages: [Message] = []
        for (c, conversation) in Self.conversations.enumerated() {
            for i in 0..<perConversation {
                // Two hours apart from 2023-11-14 22:13 UTC: each conversation spans two days.
                let ts = "\(1_700_000_000 + i * 7_200 + c * 10).000100"
                let user = conversation.members[i % conversation.members.count]
                let text = "\(conversation.name) message \(i) about the deploy"
                messages.append(Message(channel: conversation.id, ts: ts, user: user, text: text))
            }
        }
        // Threads: two replies in #general, one in #secret.
        let general = messages[1].ts
        messages.append(
            Message(channel: "C0GENERAL01", ts: "1700007260.000100", user: "U0AAAAAAAA2", text: "reply one", threadTS: general))
        messages.append(
            Message(channel: "C0GENERAL01", ts: "1700007320.000100", user: "U0AAAAAAAA3", text: "reply two", threadTS: general))
        messages.append(
            Message(channel: "G0PRIVATE01", ts: "1700000070.000100", user: "U0AAAAAAAA3", text: "a private reply",
                threadTS: messages[perConversation].ts))
        for index in [1, perConversation] { messages[index].threadTS = messages[index].ts }
        self.messages = messages
    }

    func replies(of parent: Message) -> [Message] {
        messages.filter { $0.threadTS == parent.ts && $0.ts != parent.ts && $0.channel == parent.channel }
    }

    func topLevel(_ channel: String) -> [Message] {
        messages.filter { $0.channel == channel && ($0.threadTS == nil || $0.threadTS == $0.ts) }
    }

    /// A message as the API (and an export) writes it; `channel` adds the `channel` field.
    func json(_ message: Message, channel: Bool = false, export: Bool = false) -> [String: Any] {
        var object: [String: Any] = ["type": "message", "user": message.user, "text": message.text, "ts": message.ts]
        if channel { object["channel"] = message.channel }
        if let thread = message.threadTS {
            object["thread_ts"] = thread
            let replies = thread == message.ts ? self.replies(of: message) : []
            if thread == message.ts {
                object["reply_count"] = replies.count
                object["latest_reply"] = replies.last?.ts
                if export { object["replies"] = replies.map { ["user": $0.user, "ts": $0.ts] } }
            } else {
                object["parent_user_id"] = messages.first { $0.ts == thread && $0.channel == message.channel }?.user
            }
        }
        return object
    }

    static func text(_ value: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }

    func historyPage(_ channel: String, withChannel: Bool = false) -> [String: Any] {
        [
            "ok": true, "has_more": false,
            "messages": topLevel(channel).reversed().map { json($0, channel: withChannel) },
            "response_metadata": ["next_cursor": ""],
        ]
    }

    func repliesPage(_ parent: Message, withChannel: Bool = false) -> [String: Any] {
        ["ok": true, "has_more": false, "messages": ([parent] + replies(of: parent)).map { json($0, channel: withChannel) }]
    }

    var threadParents: [Message] { messages.filter { $0.threadTS == $0.ts } }

    static var usersList: [String: Any] {
        ["ok": true, "members": users.map { ["id": $0.id, "name": $0.name, "real_name": $0.realName] }]
    }

    static func conversationObject(_ c: (id: String, name: String, kind: String, members: [String])) -> [String: Any] {
        switch c.kind {
        case "dm": ["id": c.id, "is_im": true, "user": c.members[1], "members": c.members]
        case "private": ["id": c.id, "name": c.name, "is_private": true, "is_group": true, "members": c.members]
        default: ["id": c.id, "name": c.name, "is_channel": true, "members": c.members]
        }
    }

    static var conversationsList: [String: Any] {
        ["ok": true, "channels": conversations.map(conversationObject), "response_metadata": ["next_cursor": ""]]
    }

    /// The official export: listings and day files with replies inline.
    func export(in root: URL) throws -> URL {
        var files: [String: String] = [:]
        files["users.json"] = Self.text(Self.users.map { ["id": $0.id, "name": $0.name, "real_name": $0.realName] })
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        for (listing, kind) in [("channels.json", "channel"), ("groups.json", "private"), ("dms.json", "dm")] {
            let entries = Self.conversations.filter { $0.kind == kind }
            files[listing] = Self.text(
                entries.map { c -> [String: Any] in
                    kind == "dm" ? ["id": c.id, "members": c.members] : ["id": c.id, "name": c.name, "members": c.members]
                })
        }
        for conversation in Self.conversations {
            let folder = conversation.kind == "dm" ? conversation.id : conversation.name
            let days = Dictionary(grouping: messages.filter { $0.channel == conversation.id }) {
                formatter.string(from: Date(timeIntervalSince1970: Double($0.ts)!))
            }
            for (day, dayMessages) in days {
                let sorted = dayMessages.sorted { Double($0.ts)! < Double($1.ts)! }
                files["\(folder)/\(day).json"] = Self.text(sorted.map { json($0, export: true) })
            }
        }
        return try TestSupport.writeExport(files, in: root)
    }

    /// Per-conversation folders named by id with numbered pages and per-thread reply files, plus listings.
    func tree(in root: URL) throws -> URL {
        var files: [String: String] = [:]
        for conversation in Self.conversations {
            files["\(conversation.id)/0001.json"] = Self.text(historyPage(conversation.id))
        }
        for parent in threadParents {
            files["\(parent.channel)/threads/\(parent.ts).json"] = Self.text(repliesPage(parent))
        }
        for user in Self.users {
            files["users/\(user.id).json"] = Self.text(["id": user.id, "name": user.name, "real_name": user.realName])
        }
        files["channels.json"] = Self.text(Self.conversationsList)
        return try TestSupport.writeExport(files, in: root)
    }

    /// The layout of scripts that call the Web API (issue 55): `channels.json` an array of conversation ids,
    /// `names.json` their names, `messages/<id>/<n>.json` history pages of two messages with a numeric cursor,
    /// `threads/<id>/<thread ts>.json` reply pages, and `users/<id>.json` one user object each.
    func apiScript(in root: URL) throws -> URL {
        var files: [String: String] = [:]
        files["channels.json"] = Self.text(Self.conversations.map(\.id))
        let dmNames = Self.conversations.filter { $0.kind == "dm" }.map { dm in
            (dm.id, Self.users.first { $0.id == dm.members[1] }?.name ?? dm.id)
        }
        files["names.json"] = Self.text(
            Dictionary(uniqueKeysWithValues: Self.conversations.filter { $0.kind != "dm" }.map { ($0.id, $0.name) } + dmNames))
        for conversation in Self.conversations {
            let newestFirst = topLevel(conversation.id).reversed().map { json($0) }
            for (n, start) in stride(from: 0, to: newestFirst.count, by: 2).enumerated() {
                let page: [String: Any] = ["cursor": n, "messages": Array(newestFirst[start..<min(start + 2, newestFirst.count)])]
                files["messages/\(conversation.id)/\(n).json"] = Self.text(page)
            }
        }
        for parent in threadParents {
            files["threads/\(parent.channel)/\(parent.ts).json"] = Self.text(
                ["messages": ([parent] + replies(of: parent)).map { json($0) }])
        }
        for user in Self.users {
            files["users/\(user.id).json"] = Self.text(["id": user.id, "name": user.name, "real_name": user.realName])
        }
        return try TestSupport.writeExport(files, in: root)
    }

    /// One folder of mixed files: pages named by id, pages that name their conversation in their messages, a bare
    /// array, listings and an id map.
    func mixedFolder(in root: URL) throws -> URL {
        var files: [String: String] = [:]
        files["users.json"] = Self.text(Self.usersList)
        files["conversations.json"] = Self.text(Self.conversationsList)
        files["names.json"] = Self.text(["G0PRIVATE01": "secret", "U0AAAAAAAA3": "cat"])
        files["C0GENERAL01.json"] = Self.text(historyPage("C0GENERAL01"))
        files["history-secret.json"] = Self.text(historyPage("G0PRIVATE01", withChannel: true))
        files["D0DIRECT001-all.json"] = Self.text(topLevel("D0DIRECT001").map { json($0) })
        for parent in threadParents {
            if parent.channel == "C0GENERAL01" {
                files["C0GENERAL01_\(parent.ts).json"] = Self.text(repliesPage(parent))
            } else {
                files["replies-\(parent.ts).json"] = Self.text(repliesPage(parent, withChannel: true))
            }
        }
        return try TestSupport.writeExport(files, in: root)
    }

    /// One file of JSON lines: listings, history and replies pages (their messages carrying `channel`), and the
    /// DM's messages one per line.
    func jsonLines(at file: URL) throws -> URL {
        var lines = [Self.text(Self.usersList), Self.text(Self.conversationsList)]
        for conversation in Self.conversations where conversation.kind != "dm" {
            lines.append(Self.text(historyPage(conversation.id, withChannel: true)))
        }
        lines += threadParents.map { Self.text(repliesPage($0, withChannel: true)) }
        lines.append("")
        lines += topLevel("D0DIRECT001").map { Self.text(json($0, channel: true)) }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
        return file
    }

    /// What an archive holds, for comparing imports: one line per message (conversation, ts, user, thread, reply
    /// count, text) and one per conversation (id, kind).
    static func contents(of archive: Archive) throws -> [String] {
        try archive.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT c.slack_id || '|' || m.ts || '|' || coalesce(m.user_id, '') || '|' ||
                        coalesce(m.thread_ts, '') || '|' || m.reply_count || '|' || m.text
                    FROM message m JOIN conversation c ON c.id = m.conversation_id
                    ORDER BY c.slack_id, m.ts_key
                    """)
                + String.fetchAll(db, sql: "SELECT slack_id || '|' || kind FROM conversation ORDER BY slack_id")
        }
    }
}
