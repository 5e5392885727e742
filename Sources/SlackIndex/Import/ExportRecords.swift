import Foundation

/// A member from `users.json` / `org_users.json` (or a `users.list` page).
struct UserRecord: Decodable, Sendable {
    var id: String
    var teamID: String?
    var name: String?
    var realName: String?
    var displayName: String?
    var deleted: Bool
    var isBot: Bool
    var timeZone: String?

    private enum CodingKeys: String, CodingKey {
        case id, team_id, name, real_name, deleted, is_bot, tz, profile
    }
    private enum ProfileKeys: String, CodingKey {
        case real_name, display_name
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let id = c.lenientString(.id), !id.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: c, debugDescription: "user without id")
        }
        self.id = id
        teamID = c.lenientString(.team_id)
        name = c.lenientString(.name)
        realName = c.lenientString(.real_name)
        deleted = c.lenientBool(.deleted) ?? false
        isBot = c.lenientBool(.is_bot) ?? false
        timeZone = c.lenientString(.tz)
        if let profile = try? c.nestedContainer(keyedBy: ProfileKeys.self, forKey: .profile) {
            displayName = profile.lenientString(.display_name)
            if realName?.isEmpty ?? true { realName = profile.lenientString(.real_name) }
        }
    }
}

/// A conversation from `channels.json`, `groups.json`, `dms.json` or `mpims.json` (or `conversations.list`).
struct ConversationRecord: Decodable, Sendable {
    var id: String
    var name: String?
    var created: Int64?
    var isArchived: Bool
    var members: [String]
    var topic: String?
    var purpose: String?
    /// `is_private`, `is_im`, `is_mpim` when the record comes from the API.
    var isPrivate: Bool?
    var isIM: Bool?
    var isMPIM: Bool?
    var user: String?

    private enum CodingKeys: String, CodingKey {
        case id, name, created, is_archived, members, topic, purpose, is_private, is_im, is_mpim, user
    }
    private enum TextKeys: String, CodingKey { case value }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let id = c.lenientString(.id), !id.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: c, debugDescription: "conversation without id")
        }
        self.id = id
        name = c.lenientString(.name)
        created = c.lenientInt(.created)
        isArchived = c.lenientBool(.is_archived) ?? false
        members = c.stringArray(.members)
        topic = (try? c.nestedContainer(keyedBy: TextKeys.self, forKey: .topic))?.lenientString(.value)
        purpose = (try? c.nestedContainer(keyedBy: TextKeys.self, forKey: .purpose))?.lenientString(.value)
        isPrivate = c.lenientBool(.is_private)
        isIM = c.lenientBool(.is_im)
        isMPIM = c.lenientBool(.is_mpim)
        user = c.lenientString(.user)
        if members.isEmpty, let user { members = [user] }
    }
}

/// A reaction on a message.
public struct ReactionRecord: Decodable, Sendable, Hashable {
    public var name: String
    public var count: Int
    public var users: [String]

    private enum CodingKeys: String, CodingKey { case name, count, users }

    public init(name: String, count: Int, users: [String]) {
        self.name = name
        self.count = count
        self.users = users
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let name = c.lenientString(.name), !name.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .name, in: c, debugDescription: "reaction without name")
        }
        self.name = name
        users = c.stringArray(.users)
        count = Int(c.lenientInt(.count) ?? Int64(users.count))
    }
}

/// File metadata carried by a message (the file itself is never downloaded).
public struct FileRecord: Decodable, Sendable, Hashable {
    public var id: String?
    public var name: String?
    public var title: String?
    public var mimetype: String?
    public var filetype: String?
    public var size: Int64?
    public var mode: String?
    public var urlPrivate: String?
    public var urlPrivateDownload: String?
    public var permalink: String?

    private enum CodingKeys: String, CodingKey {
        case id, name, title, mimetype, filetype, size, mode, url_private, url_private_download, permalink
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = c.lenientString(.id)
        name = c.lenientString(.name)
        title = c.lenientString(.title)
        mimetype = c.lenientString(.mimetype)
        filetype = c.lenientString(.filetype)
        size = c.lenientInt(.size)
        mode = c.lenientString(.mode)
        urlPrivate = c.lenientString(.url_private).map(URLScrubber.strippingTokens)
        urlPrivateDownload = c.lenientString(.url_private_download).map(URLScrubber.strippingTokens)
        permalink = c.lenientString(.permalink).map(URLScrubber.strippingTokens)
        if id == nil && name == nil && title == nil {
            throw DecodingError.dataCorruptedError(forKey: .id, in: c, debugDescription: "empty file")
        }
    }
}

/// The searchable parts of an attachment (unfurls, bot posts).
struct AttachmentRecord: Decodable, Sendable {
    var pieces: [String]
    var hasLink: Bool

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
        self.pieces = pieces
        hasLink = c.lenientString(.title_link) != nil || c.lenientString(.from_url) != nil
            || c.lenientString(.original_url) != nil
    }

    private struct FieldValue: Decodable {
        var parts: [String]
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: FieldKeys.self)
            parts = [c.lenientString(.title), c.lenientString(.value)].compactMap { $0 }.filter { !$0.isEmpty }
        }
    }
}

/// Text gathered from Block Kit blocks (used when a message's `text` is empty).
struct BlockText: Decodable, Sendable {
    var text: String

    init(from decoder: any Decoder) throws {
        var out = ""
        BlockText.collect(decoder, into: &out, depth: 0)
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
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") })
        else { return text }
        return text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
