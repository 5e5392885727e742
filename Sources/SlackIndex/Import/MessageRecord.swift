import Foundation

/// One message object as it appears in an export day file, an API page or an event.
///
/// Decoding never fails on a field of an unexpected type: such a field reads as absent, and the message is kept
/// (its raw JSON too). Only an object without a usable `ts` is rejected later, by the importer, with a reason.
public struct MessageRecord: Decodable, Sendable {
    public var type: String?
    public var subtype: String?
    public var ts: String?
    public var user: String?
    public var botID: String?
    public var username: String?
    public var text: String
    public var threadTS: String?
    public var replyCount: Int64?
    public var editedTS: String?
    public var editedUser: String?
    public var reactions: [ReactionRecord]
    public var files: [FileRecord]
    var attachments: [AttachmentRecord]
    /// Text rebuilt from `blocks`, only read when `text` is empty.
    var blockText: String?
    public var isPinned: Bool
    /// `message_deleted`: the ts of the message that was removed.
    public var deletedTS: String?
    /// Event pages: the conversation the event belongs to.
    public var channel: String?
    /// The author's names as the message carries them (`user_profile`), for users absent from users.json.
    var profileHandle: String?
    var profileRealName: String?
    var profileDisplayName: String?
    /// `message_changed`: the new version of the message (an array so the struct can hold itself).
    var changedMessage: [MessageRecord]

    private enum CodingKeys: String, CodingKey {
        case type, subtype, ts, user, bot_id, username, text, thread_ts, reply_count, edited, reactions, files,
            file, attachments, blocks, pinned_to, deleted_ts, channel, user_profile, message, bot_profile
    }
    private enum EditedKeys: String, CodingKey { case user, ts }
    private enum ProfileKeys: String, CodingKey { case name, real_name, display_name }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = c.lenientString(.type)
        subtype = c.lenientString(.subtype)
        ts = c.lenientString(.ts)
        user = c.lenientString(.user)
        botID = c.lenientString(.bot_id)
        username = c.lenientString(.username)
        text = c.lenientString(.text) ?? ""
        threadTS = c.lenientString(.thread_ts)
        replyCount = c.lenientInt(.reply_count)
        if let edited = try? c.nestedContainer(keyedBy: EditedKeys.self, forKey: .edited) {
            editedTS = edited.lenientString(.ts)
            editedUser = edited.lenientString(.user)
        }
        reactions = c.lossyArray(ReactionRecord.self, .reactions)
        var files = c.lossyArray(FileRecord.self, .files)
        if files.isEmpty, let file = try? c.decodeIfPresent(FileRecord.self, forKey: .file) { files = [file] }
        self.files = files
        attachments = c.lossyArray(AttachmentRecord.self, .attachments)
        if text.isEmpty, c.contains(.blocks) {
            let blocks = c.lossyArray(BlockText.self, .blocks)
            let joined = blocks.map(\.text).joined(separator: " ").trimmingCharacters(in: .whitespaces)
            blockText = joined.isEmpty ? nil : joined
        }
        isPinned = !c.stringArray(.pinned_to).isEmpty
        deletedTS = c.lenientString(.deleted_ts)
        channel = c.lenientString(.channel)
        if let profile = try? c.nestedContainer(keyedBy: ProfileKeys.self, forKey: .user_profile) {
            profileHandle = profile.lenientString(.name)
            profileRealName = profile.lenientString(.real_name)
            profileDisplayName = profile.lenientString(.display_name)
        } else if let profile = try? c.nestedContainer(keyedBy: ProfileKeys.self, forKey: .bot_profile) {
            profileHandle = profile.lenientString(.name)
        }
        if subtype == "message_changed", let inner = try? c.decodeIfPresent(MessageRecord.self, forKey: .message) {
            changedMessage = [inner]
        } else {
            changedMessage = []
        }
    }

    /// The author id: the user, else the bot.
    public var authorID: String? { user ?? botID }
}
