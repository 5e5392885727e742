import Foundation

@_spi(Benchmarks) @testable import SlackIndex

// The Codable decoder of message objects the importer used before `MessageRecord(json:)`, kept as the reference
// the fast parser is checked against (`FastJSONOracleTests`). It is obviously correct in the way that matters
// here: every field is read by `JSONDecoder` through the same lenient container helpers the listings use
// (`Import/Lenient.swift`), so it states what a message's fields mean, not how to find them in bytes quickly.
// Moved here unchanged from `Sources/` (where it had no caller left), except that each type wraps the product
// value it builds.

/// Decodes one message object with `JSONDecoder`; nil where the reference throws.
enum CodableMessageReference {
    static func decode(_ bytes: some Collection<UInt8>) -> MessageRecord? {
        try? JSONDecoder().decode(ReferenceMessage.self, from: Data(bytes)).record
    }

    /// True when `JSONDecoder` accepts the bytes as a JSON document (whatever its shape).
    static func isAcceptedJSON(_ bytes: some Collection<UInt8>) -> Bool {
        (try? JSONDecoder().decode(AnyDocument.self, from: Data(bytes))) != nil
    }

    /// Reads nothing, so decoding it fails only where `JSONDecoder`'s scan of the whole document fails.
    private struct AnyDocument: Decodable {
        init(from decoder: any Decoder) throws {}
    }
}

/// `MessageRecord`'s Codable reference.
struct ReferenceMessage: Decodable {
    var record: MessageRecord

    private enum CodingKeys: String, CodingKey {
        case type, subtype, ts, user, bot_id, username, text, thread_ts, reply_count, edited, reactions, files,
            file, attachments, blocks, pinned_to, deleted_ts, channel, user_profile, message, bot_profile
    }
    private enum EditedKeys: String, CodingKey { case user, ts }
    private enum ProfileKeys: String, CodingKey { case name, real_name, display_name }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var record = MessageRecord(
            text: "", reactions: [], files: [], attachments: [], isPinned: false, changedMessage: [])
        record.type = c.lenientString(.type)
        record.subtype = c.lenientString(.subtype)
        record.ts = c.lenientString(.ts)
        record.user = c.lenientString(.user)
        record.botID = c.lenientString(.bot_id)
        record.username = c.lenientString(.username)
        record.text = c.lenientString(.text) ?? ""
        record.threadTS = c.lenientString(.thread_ts)
        record.replyCount = c.lenientInt(.reply_count)
        if let edited = try? c.nestedContainer(keyedBy: EditedKeys.self, forKey: .edited) {
            record.editedTS = edited.lenientString(.ts)
            record.editedUser = edited.lenientString(.user)
        }
        record.reactions = c.lossyArray(ReferenceReaction.self, .reactions).map(\.record)
        var files = c.lossyArray(ReferenceFile.self, .files).map(\.record)
        if files.isEmpty, let file = try? c.decodeIfPresent(ReferenceFile.self, forKey: .file) { files = [file.record] }
        record.files = files
        record.attachments = c.lossyArray(ReferenceAttachment.self, .attachments).map(\.record)
        if record.text.isEmpty, c.contains(.blocks) {
            let blocks = c.lossyArray(ReferenceBlockText.self, .blocks)
            let joined = blocks.map(\.text).joined(separator: " ").trimmingCharacters(in: .whitespaces)
            record.blockText = joined.isEmpty ? nil : joined
        }
        record.isPinned = !c.stringArray(.pinned_to).isEmpty
        record.deletedTS = c.lenientString(.deleted_ts)
        record.channel = c.lenientString(.channel)
        if let profile = try? c.nestedContainer(keyedBy: ProfileKeys.self, forKey: .user_profile) {
            record.profileHandle = profile.lenientString(.name)
            record.profileRealName = profile.lenientString(.real_name)
            record.profileDisplayName = profile.lenientString(.display_name)
        } else if let profile = try? c.nestedContainer(keyedBy: ProfileKeys.self, forKey: .bot_profile) {
            record.profileHandle = profile.lenientString(.name)
        }
        if record.subtype == "message_changed",
            let inner = try? c.decodeIfPresent(ReferenceMessage.self, forKey: .message)
        {
            record.changedMessage = [inner.record]
        }
        self.record = record
    }
}

/// `ReactionRecord`'s Codable reference.
struct ReferenceReaction: Decodable {
    var record: ReactionRecord

    private enum CodingKeys: String, CodingKey { case name, count, users }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let name = c.lenientString(.name), !name.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .name, in: c, debugDescription: "reaction without name")
        }
        let users = c.stringArray(.users)
        record = ReactionRecord(name: name, count: Int(c.lenientInt(.count) ?? Int64(users.count)), users: users)
    }
}

/// `PreparedFile`'s Codable reference.
struct ReferenceFile: Decodable {
    var record: PreparedFile

    private enum CodingKeys: String, CodingKey {
        case id, name, title, mimetype, filetype, size, mode, url_private, url_private_download, permalink
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var file = PreparedFile()
        file.id = c.lenientString(.id)
        file.name = c.lenientString(.name)
        file.title = c.lenientString(.title)
        file.mimetype = c.lenientString(.mimetype)
        file.filetype = c.lenientString(.filetype)
        file.size = c.lenientInt(.size)
        file.mode = c.lenientString(.mode)
        file.urlPrivate = c.lenientString(.url_private).map(URLScrubber.strippingTokens)
        file.urlPrivateDownload = c.lenientString(.url_private_download).map(URLScrubber.strippingTokens)
        file.permalink = c.lenientString(.permalink).map(URLScrubber.strippingTokens)
        if file.id == nil && file.name == nil && file.title == nil {
            throw DecodingError.dataCorruptedError(forKey: .id, in: c, debugDescription: "empty file")
        }
        record = file
    }
}

/// `AttachmentRecord`'s Codable reference.
struct ReferenceAttachment: Decodable {
    var record: AttachmentRecord

    private enum CodingKeys: String, CodingKey {
        case fallback, pretext, title, title_link, text, fields, footer, author_name, from_url, original_url
    }
    private enum FieldKeys: String, CodingKey { case title, value }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var pieces: [String] = []
        for key in [CodingKeys.author_name, .pretext, .title, .text] {
            if let value = c.lenientString(key), !value.isEmpty { pieces.append(value) }
        }
        if let fields = try? c.decodeIfPresent([Lossy<FieldValue>].self, forKey: .fields) {
            for field in fields.compactMap(\.value) { pieces.append(contentsOf: field.parts) }
        }
        if pieces.isEmpty, let fallback = c.lenientString(.fallback), !fallback.isEmpty { pieces.append(fallback) }
        if let footer = c.lenientString(.footer), !footer.isEmpty { pieces.append(footer) }
        let hasLink = c.lenientString(.title_link) != nil || c.lenientString(.from_url) != nil
            || c.lenientString(.original_url) != nil
        record = AttachmentRecord(pieces: pieces, hasLink: hasLink)
    }

    private struct FieldValue: Decodable {
        var parts: [String]
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: FieldKeys.self)
            parts = [c.lenientString(.title), c.lenientString(.value)].compactMap { $0 }.filter { !$0.isEmpty }
        }
    }
}

/// Text gathered from Block Kit blocks (used when a message's `text` is empty): the reference of the fast
/// parser's `BlockTextReader`.
struct ReferenceBlockText: Decodable {
    var text: String

    init(from decoder: any Decoder) throws {
        var out = ""
        ReferenceBlockText.collect(decoder, into: &out, depth: 0)
        text = out
    }

    private static func collect(_ decoder: any Decoder, into out: inout String, depth: Int) {
        guard depth < 12 else { return }
        if let c = try? decoder.container(keyedBy: AnyKey.self) {
            let type = c.lenientString(AnyKey("type"))
            switch type {
            case "user":
                if let id = c.lenientString(AnyKey("user_id")) { out += "<@\(id)>" }
            case "channel":
                if let id = c.lenientString(AnyKey("channel_id")) { out += "<#\(id)>" }
            case "link":
                if let url = c.lenientString(AnyKey("url")) {
                    let label = c.lenientString(AnyKey("text"))
                    out += label.map { "<\(url)|\($0)>" } ?? "<\(url)>"
                }
                return
            case "emoji":
                if let name = c.lenientString(AnyKey("name")) { out += ":\(name):" }
            case "broadcast":
                if let range = c.lenientString(AnyKey("range")) { out += "<!\(range)>" }
            default:
                break
            }
            if let text = c.lenientString(AnyKey("text")) {
                out += escape(text)
            } else if let inner = try? c.superDecoder(forKey: AnyKey("text")) {
                collect(inner, into: &out, depth: depth + 1)
            }
            for key in ["elements", "fields", "blocks"] {
                if var list = try? c.nestedUnkeyedContainer(forKey: AnyKey(key)) {
                    while !list.isAtEnd {
                        guard let element = try? list.superDecoder() else { break }
                        collect(element, into: &out, depth: depth + 1)
                    }
                    if key != "elements" || type == "rich_text" || type == "section" { out += " " }
                }
            }
        }
    }

    /// Blocks carry unescaped text; the mrkdwn normaliser expects `text`'s escaping, so re-escape it.
    private static func escape(_ text: String) -> String {
        let special: Set<UInt8> = [UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">")]
        guard text.utf8.contains(where: special.contains) else { return text }
        return text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// A coding key made from any string, for containers whose keys we read by name.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
