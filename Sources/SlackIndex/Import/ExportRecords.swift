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
    /// `is_placeholder`: slackindex's extension in what `serve` answers, for a member only known from messages.
    var isPlaceholder: Bool
    /// The profile image the web UI shows: `image_72` (36 px at twice the density), else the nearest size.
    var avatarURL: String?

    private enum CodingKeys: String, CodingKey {
        case id, team_id, name, real_name, deleted, is_bot, tz, profile, is_placeholder
    }
    private enum ProfileKeys: String, CodingKey {
        case real_name, display_name
        case image_72, image_48, image_192, image_512, image_original, image_32, image_24
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
        isPlaceholder = c.lenientBool(.is_placeholder) ?? false
        if let profile = try? c.nestedContainer(keyedBy: ProfileKeys.self, forKey: .profile) {
            displayName = profile.lenientString(.display_name)
            if realName?.isEmpty ?? true { realName = profile.lenientString(.real_name) }
            let sizes: [ProfileKeys] = [.image_72, .image_48, .image_192, .image_512, .image_original, .image_32, .image_24]
            avatarURL = sizes.lazy.compactMap { profile.lenientString($0) }.first { url in
                let lower = url.lowercased()
                return lower.hasPrefix("https://") || lower.hasPrefix("http://")
            }
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
package struct ReactionRecord: Sendable, Hashable {
    package var name: String
    package var count: Int
    package var users: [String]

    package init(name: String, count: Int, users: [String]) {
        self.name = name
        self.count = count
        self.users = users
    }
}

/// The searchable parts of an attachment (unfurls, bot posts).
struct AttachmentRecord: Sendable {
    /// `author_name`, `pretext`, `title`, `text`, then the fields' titles and values, `fallback` when none of
    /// those is there, and `footer`; empty strings left out.
    var pieces: [String]
    /// `title_link`, `from_url` or `original_url` holds a string or a number.
    var hasLink: Bool
}
