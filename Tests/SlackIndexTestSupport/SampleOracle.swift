import Foundation

/// The committed sample export read straight from its JSON files, to compute expected search results by brute
/// force (no code from `Sources/` is used).
///
/// Word matching rule (documented for the end-to-end tests): a message's *searchable text* is its `text` with
/// `&lt; &gt; &amp;` decoded and `< > |` turned into spaces (so link targets, labels and ids all count, as the
/// index keeps URLs and ids in its second column), the names (handle, real, display) of users mentioned as
/// `<@U…>`, its attachments' `author_name`, `pretext`, `title`, `text`, field titles and values, `fallback` (only
/// when none of those exist) and `footer`, and its files' `name` and `title` (the title only when the name does
/// not start with it). Words are maximal runs of letters and digits after case and diacritic folding. The tests
/// only use curated ASCII words that occur in no user or conversation name, where this rule and the index's
/// tokenizer cannot disagree.
final class SampleOracle: Sendable {
    struct Message: Sendable {
        let conversationID: String
        let folder: String
        let kind: String
        let ts: String
        let micros: Int64
        let user: String?
        let text: String
        let tokens: [String]
        let tokenSet: Set<String>
        let mentions: Set<String>
        let hasLink: Bool
        let hasFile: Bool
        let isPinned: Bool
        let reactions: [String]
        /// `thread_ts` when present and not zero.
        let threadTS: String?

        var key: String { conversationID + " " + ts }
    }

    struct Conversation: Sendable {
        let id: String
        let kind: String
        let name: String
        let folder: String
        let members: [String]
    }

    let messages: [Message]
    let conversations: [Conversation]
    /// handle → user id.
    let userIDs: [String: String]
    /// Every folded word of every user and conversation name.
    let nameWords: Set<String>
    /// (conversation id, thread ts) → users who posted in the thread.
    let threadPosters: [String: Set<String>]

    init(folder: String) throws {
        let root = URL(fileURLWithPath: folder)
        func array(_ name: String) throws -> [[String: Any]] {
            let url = root.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: url.path) else { return [] }
            return (try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [[String: Any]]) ?? []
        }
        var names: [String: [String]] = [:]
        var userIDs: [String: String] = [:]
        var nameWords: Set<String> = []
        for user in try array("users.json") {
            guard let id = user["id"] as? String else { continue }
            let profile = user["profile"] as? [String: Any] ?? [:]
            let list = [user["name"], user["real_name"], profile["real_name"], profile["display_name"]]
                .compactMap { $0 as? String }.filter { !$0.isEmpty }
            names[id] = list
            if let handle = user["name"] as? String { userIDs[handle] = id }
            for name in list { nameWords.formUnion(SampleOracle.words(name)) }
        }
        var conversations: [Conversation] = []
        for (file, kind) in [("channels.json", "channel"), ("groups.json", "group"), ("dms.json", "dm"),
                             ("mpims.json", "mpim")] {
            for object in try array(file) {
                guard let id = object["id"] as? String else { continue }
                let name = object["name"] as? String ?? id
                conversations.append(Conversation(
                    id: id, kind: kind, name: name, folder: kind == "dm" ? id : name,
                    members: object["members"] as? [String] ?? []))
                nameWords.formUnion(SampleOracle.words(name))
            }
        }
        var messages: [Message] = []
        var threadPosters: [String: Set<String>] = [:]
        for conversation in conversations {
            let directory = root.appendingPathComponent(conversation.folder)
            let days = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                .filter { $0.hasSuffix(".json") }.sorted()
            for day in days {
                let data = try Data(contentsOf: directory.appendingPathComponent(day))
                for object in (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? [] {
                    let message = SampleOracle.message(object, in: conversation, names: names)
                    messages.append(message)
                    if let thread = message.threadTS, let user = message.user {
                        threadPosters[conversation.id + " " + thread, default: []].insert(user)
                    }
                }
            }
        }
        self.messages = messages
        self.conversations = conversations
        self.userIDs = userIDs
        self.nameWords = nameWords
        self.threadPosters = threadPosters
    }

    private static func message(_ object: [String: Any], in conversation: Conversation, names: [String: [String]])
        -> Message
    {
        let text = object["text"] as? String ?? ""
        let ts = object["ts"] as? String ?? ""
        var searchable = [text]
        var mentions: Set<String> = []
        var hasLink = text.contains("<http") || text.contains("<mailto")
        for attachment in object["attachments"] as? [[String: Any]] ?? [] {
            var pieces = ["author_name", "pretext", "title", "text"].compactMap { attachment[$0] as? String }
            for field in attachment["fields"] as? [[String: Any]] ?? [] {
                pieces += ["title", "value"].compactMap { field[$0] as? String }
            }
            pieces = pieces.filter { !$0.isEmpty }
            if pieces.isEmpty, let fallback = attachment["fallback"] as? String { pieces.append(fallback) }
            if let footer = attachment["footer"] as? String { pieces.append(footer) }
            searchable += pieces
            hasLink = hasLink || pieces.contains { $0.contains("<http") || $0.contains("<mailto") }
                || ["title_link", "from_url", "original_url"].contains { attachment[$0] is String }
        }
        for piece in searchable {
            var rest = Substring(piece)
            while let range = rest.range(of: "<@") {
                let id = rest[range.upperBound...].prefix { $0 != ">" && $0 != "|" }
                mentions.insert(String(id))
                rest = rest[range.upperBound...]
            }
        }
        for id in mentions { searchable += names[id] ?? [] }
        let files = object["files"] as? [[String: Any]] ?? []
        for file in files {
            let name = file["name"] as? String ?? ""
            searchable.append(name)
            if let title = file["title"] as? String, !name.hasPrefix(title) { searchable.append(title) }
        }
        let joined = searchable.joined(separator: "\n")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
        let tokens = words(joined.replacingOccurrences(of: "<", with: " ").replacingOccurrences(of: ">", with: " ")
            .replacingOccurrences(of: "|", with: " "))
        var threadTS = object["thread_ts"] as? String
        if let thread = threadTS, micros(thread) == 0 { threadTS = nil }
        return Message(
            conversationID: conversation.id, folder: conversation.folder, kind: conversation.kind, ts: ts,
            micros: micros(ts), user: object["user"] as? String, text: text, tokens: tokens,
            tokenSet: Set(tokens), mentions: mentions, hasLink: hasLink, hasFile: !files.isEmpty,
            isPinned: !((object["pinned_to"] as? [String]) ?? []).isEmpty,
            reactions: (object["reactions"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String },
            threadTS: threadTS)
    }

    /// `1714550400.000100` → microseconds since 1970.
    static func micros(_ ts: String) -> Int64 {
        let parts = ts.split(separator: ".", omittingEmptySubsequences: false)
        let seconds = Int64(parts.first ?? "") ?? 0
        let fraction = parts.count > 1 ? String(parts[1].prefix(6)) : ""
        let padded = fraction + String(repeating: "0", count: 6 - fraction.count)
        return seconds * 1_000_000 + (Int64(padded) ?? 0)
    }

    /// Case- and diacritic-folded words: maximal runs of letters and digits.
    static func words(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var words: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in folded.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
                current.append(scalar)
            default:
                if !current.isEmpty { words.append(String(current)) }
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { words.append(String(current)) }
        return words
    }

    func conversation(folder: String) -> Conversation? { conversations.first { $0.folder == folder } }

    /// Replaces `{u:handle}` with the user's id and `{c:folder}` with the conversation's id.
    func expand(_ query: String) -> String {
        guard query.contains("{") else { return query }
        var result = query
        for (handle, id) in userIDs { result = result.replacingOccurrences(of: "{u:\(handle)}", with: id) }
        for conversation in conversations {
            result = result.replacingOccurrences(of: "{c:\(conversation.folder)}", with: conversation.id)
        }
        return result
    }
}

/// A brute-force predicate over the sample's messages.
struct Expect: Sendable {
    let test: @Sendable (SampleOracle, SampleOracle.Message) -> Bool

    static func && (lhs: Expect, rhs: Expect) -> Expect { Expect { lhs.test($0, $1) && rhs.test($0, $1) } }
    static prefix func ! (operand: Expect) -> Expect { Expect { !operand.test($0, $1) } }

    static let all = Expect { _, _ in true }
    static func word(_ word: String) -> Expect {
        let folded = SampleOracle.words(word).joined()
        return Expect { _, m in m.tokenSet.contains(folded) }
    }
    static func phrase(_ phrase: String) -> Expect {
        let wanted = SampleOracle.words(phrase)
        return Expect { _, m in
            guard m.tokens.count >= wanted.count else { return false }
            return (0...(m.tokens.count - wanted.count)).contains { Array(m.tokens[$0..<($0 + wanted.count)]) == wanted }
        }
    }
    static func prefix(_ stem: String) -> Expect {
        let folded = SampleOracle.words(stem).joined()
        return Expect { _, m in m.tokens.contains { $0.hasPrefix(folded) } }
    }
    /// CJK and Thai: the word occurs in the text (the index finds it by ICU word breaking).
    static func substring(_ text: String) -> Expect { Expect { _, m in m.text.contains(text) } }
    static func inFolder(_ folder: String) -> Expect { Expect { _, m in m.folder == folder } }
    static func from(_ handle: String) -> Expect { Expect { o, m in m.user != nil && m.user == o.userIDs[handle] } }
    /// `in:@user` without `--me`: every 1:1 DM the user is in.
    static func dmWith(_ handle: String) -> Expect {
        Expect { o, m in
            m.kind == "dm" && o.conversation(folder: m.folder)?.members.contains(o.userIDs[handle] ?? "") == true
        }
    }
    /// `to:@user`: DMs and group DMs the user is in, or a mention of the user.
    static func to(_ handle: String) -> Expect {
        Expect { o, m in
            let id = o.userIDs[handle] ?? ""
            return m.mentions.contains(id)
                || (["dm", "mpim"].contains(m.kind) && o.conversation(folder: m.folder)?.members.contains(id) == true)
        }
    }
    /// `with:@user`: DMs and group DMs the user is in, or threads the user posted in.
    static func with(_ handle: String) -> Expect {
        Expect { o, m in
            let id = o.userIDs[handle] ?? ""
            if ["dm", "mpim"].contains(m.kind), o.conversation(folder: m.folder)?.members.contains(id) == true {
                return true
            }
            guard let thread = m.threadTS else { return false }
            return o.threadPosters[m.conversationID + " " + thread]?.contains(id) == true
        }
    }
    static let hasLink = Expect { _, m in m.hasLink }
    static let hasFile = Expect { _, m in m.hasFile }
    static let hasReaction = Expect { _, m in !m.reactions.isEmpty }
    static let isThread = Expect { _, m in m.threadTS != nil }
    static func reaction(_ name: String) -> Expect {
        Expect { _, m in m.reactions.contains { $0 == name || $0.hasPrefix(name + "::") } }
    }

    /// Local midnight of a day in a zone with a fixed UTC offset (UTC, Asia/Tokyo), in microseconds.
    static func dayStart(_ day: String, offsetHours: Int) -> Int64 {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])) ?? Date()
        return (Int64(date.timeIntervalSince1970) - Int64(offsetHours) * 3_600) * 1_000_000
    }
    static func nextDay(_ day: String) -> String {
        let start = dayStart(day, offsetHours: 0) / 1_000_000 + 86_400
        let date = Date(timeIntervalSince1970: TimeInterval(start))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }
    /// `before:D`: ts < start of D.
    static func before(_ day: String, offset: Int) -> Expect {
        let bound = dayStart(day, offsetHours: offset)
        return Expect { _, m in m.micros < bound }
    }
    /// `after:D`: ts ≥ start of the day after D.
    static func after(_ day: String, offset: Int) -> Expect {
        let bound = dayStart(nextDay(day), offsetHours: offset)
        return Expect { _, m in m.micros >= bound }
    }
    /// `on:D`, and `during:` as first...last.
    static func between(_ first: String, _ last: String, offset: Int) -> Expect {
        let lower = dayStart(first, offsetHours: offset)
        let upper = dayStart(nextDay(last), offsetHours: offset)
        return Expect { _, m in m.micros >= lower && m.micros < upper }
    }
}
