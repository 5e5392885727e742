import Foundation

/// Turns decoded message records into `PreparedMessage`s: normalised search text, flags, keys and hash.
///
/// Keeps the set of authors it has seen, so users absent from `users.json` (Slackbot, Slack Connect users, bots
/// without a user) become placeholder users exactly once.
struct MessagePreparer {
    var names: NameDirectory
    private var knownAuthors: Set<String>
    /// Placeholder users found since the last `takePlaceholders()`.
    private var placeholders: [User] = []
    /// `https://NAME.slack.com` seen in file permalinks: the workspace's domain.
    private(set) var domain: String?

    init(names: NameDirectory) {
        self.names = names
        knownAuthors = Set(names.users.keys)
    }

    /// Placeholders found since the last call.
    mutating func takePlaceholders() -> [User] {
        defer { placeholders = [] }
        return placeholders
    }

    /// Why a record cannot be stored, or nil when it can.
    enum Rejection: String, Error {
        case noTimestamp = "no valid ts"
        case notAMessage = "not a message object"
        case emptyRevision = "message_changed without a message"
    }

    /// Prepares one record (a `message_changed` record yields its new version).
    ///
    /// - Complexity: O(n) in the message's size.
    mutating func prepare(
        _ record: MessageRecord, raw: String, conversationRowID: Int64
    ) -> Result<PreparedMessage, Rejection> {
        // Each version is passed on, not assigned to a variable: copying a record retains its dozen strings and
        // arrays (~1% of the reader thread's samples on the 1M import).
        if record.subtype == "message_changed" {
            guard let inner = record.changedMessage.first else { return .failure(.emptyRevision) }
            let revisionKey = record.ts.flatMap(SlackTimestamp.parseKey) ?? 0
            return prepare(version: inner, revisionKey: revisionKey, raw: raw, conversationRowID: conversationRowID)
        }
        return prepare(version: record, revisionKey: 0, raw: raw, conversationRowID: conversationRowID)
    }

    /// `prepare` of a message's version: the record itself, or a `message_changed` record's new version and the
    /// revision's ts key.
    ///
    /// Over 60 lines: one pass that reads each field of the record once (flags, keys, search text, hash); the
    /// hash must cover exactly the fields the upsert compares, which is easiest to check in one place.
    private mutating func prepare(
        version record: MessageRecord, revisionKey: Int64, raw: String, conversationRowID: Int64
    ) -> Result<PreparedMessage, Rejection> {
        guard let tsString = record.ts, let tsKey = SlackTimestamp.parseKey(tsString) else {
            return .failure(.noTimestamp)
        }
        let author = record.authorID
        if let author, !knownAuthors.contains(author) {
            knownAuthors.insert(author)
            let isBot = record.user == nil && record.botID != nil
            let user = User(
                id: author, handle: record.profileHandle ?? record.username ?? author,
                realName: record.profileRealName, displayName: record.profileDisplayName, isBot: isBot,
                isPlaceholder: true)
            placeholders.append(user)
            names.addUser(user)
        }

        let body = record.text.isEmpty ? (record.blockText ?? "") : record.text
        let main = MrkdwnText.normalize(body, names: names)
        var searchText = main.text
        var extra = main.extra
        var flags: MessageFlags = main.hasLink ? [.hasLink] : []
        for attachment in record.attachments {
            if attachment.hasLink { flags.insert(.hasLink) }
            for piece in attachment.pieces {
                let normalized = MrkdwnText.normalize(piece, names: names)
                searchText += searchText.isEmpty ? normalized.text : "\n" + normalized.text
                if !normalized.extra.isEmpty { extra += extra.isEmpty ? normalized.extra : " " + normalized.extra }
                if normalized.hasLink { flags.insert(.hasLink) }
            }
        }
        for file in record.files {
            var parts: [String] = []
            if let name = file.name, !name.isEmpty { parts.append(name) }
            if let title = file.title, !title.isEmpty, !(file.name ?? "").hasPrefix(title) { parts.append(title) }
            if !parts.isEmpty {
                let joined = parts.joined(separator: " ")
                searchText += searchText.isEmpty ? joined : "\n" + joined
            }
            if domain == nil, let permalink = file.permalink { domain = Self.slackDomain(permalink) }
        }
        searchText = Self.indexable(searchText)
        if !record.files.isEmpty { flags.insert(.hasFile) }
        if !record.reactions.isEmpty { flags.insert(.hasReaction) }
        if record.isPinned { flags.insert(.pinned) }
        if record.user == nil && record.botID != nil || record.subtype == "bot_message" { flags.insert(.bot) }

        var threadTS = record.threadTS
        var threadKey = threadTS.flatMap(SlackTimestamp.parseKey)
        if threadKey == 0 {
            threadKey = nil
            threadTS = nil
        }
        if threadKey == nil || threadKey == tsKey { flags.insert(.topLevel) }
        if threadKey == tsKey { flags.insert(.threadParent) }
        if record.subtype == "thread_broadcast" { flags.insert(.broadcast) }

        let editedKey = max(record.editedTS.flatMap(SlackTimestamp.parseKey) ?? 0, revisionKey)
        var hash = StableHash()
        hash.combine(record.text)
        hash.combine(searchText)
        hash.combine(extra)
        hash.combine(record.subtype)
        hash.combine(author)
        hash.combine(record.username)
        hash.combine(threadTS)
        hash.combine(record.replyCount ?? 0)
        hash.combine(record.editedTS)
        hash.combine(flags.rawValue)
        for reaction in record.reactions {
            hash.combine(reaction.name)
            hash.combine(Int64(reaction.count))
            for user in reaction.users { hash.combine(user) }
        }
        for file in record.files {
            hash.combine(file.id)
            hash.combine(file.name)
            hash.combine(file.title)
            hash.combine(file.mode)
        }
        return .success(
            PreparedMessage(
                conversationRowID: conversationRowID, ts: tsString, tsKey: tsKey, userID: author,
                username: record.username, subtype: record.subtype, threadTS: threadTS, threadKey: threadKey,
                replyCount: record.replyCount ?? 0, editedTS: record.editedTS, editedKey: editedKey,
                flags: flags.rawValue, text: record.text, searchText: searchText,
                searchExtra: extra, raw: raw, hash: hash.signed, reactions: record.reactions.map { PreparedReaction(name: $0.name, count: $0.count, users: $0.users) },
                files: record.files))
    }

    /// The most text indexed and snippeted per message: 256 KiB, some 40,000 words. A message can be far longer
    /// (a pasted log of 50 MB); the whole text stays stored and served, but indexing and snippeting all of it made
    /// every search that hit it take seconds and hundreds of MB.
    static let maximumIndexedBytes = 256 << 10

    /// `text` cut to `maximumIndexedBytes` at a character boundary.
    static func indexable(_ text: String, limit: Int = maximumIndexedBytes) -> String {
        guard text.utf8.count > limit else { return text }
        for cut in stride(from: limit, through: max(0, limit - 4), by: -1) {
            if let prefix = String(text.utf8.prefix(cut)) { return prefix }
        }
        return String(decoding: text.utf8.prefix(limit), as: UTF8.self)
    }

    /// `acme` from `https://acme.slack.com/…`.
    static func slackDomain(_ url: String) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != ":" }
        guard host.hasSuffix(".slack.com") else { return nil }
        let name = host.dropLast(".slack.com".count)
        guard !name.isEmpty, !name.contains(".") || name.hasSuffix(".enterprise") else { return nil }
        return String(name)
    }
}
