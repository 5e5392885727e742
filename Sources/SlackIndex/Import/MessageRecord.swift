import Foundation

/// One message object as it appears in an export day file, an API page or an event.
///
/// Decoded by `init(json:)` (`MessageRecord+FastJSON.swift`). Decoding never fails on a field of an unexpected type:
/// such a field reads as absent, and the message is kept (its raw JSON too). Only an object without a usable `ts` is
/// rejected later, by the importer, with a reason.
package struct MessageRecord: Sendable {
    package var type: String?
    package var subtype: String?
    package var ts: String?
    package var user: String?
    package var botID: String?
    package var username: String?
    package var text: String
    package var threadTS: String?
    package var replyCount: Int64?
    package var editedTS: String?
    package var editedUser: String?
    package var reactions: [ReactionRecord]
    package var files: [PreparedFile]
    var attachments: [AttachmentRecord]
    /// Text rebuilt from `blocks`, only read when `text` is empty.
    var blockText: String?
    package var isPinned: Bool
    /// `message_deleted`: the ts of the message that was removed.
    package var deletedTS: String?
    /// Event pages: the conversation the event belongs to.
    package var channel: String?
    /// The author's names as the message carries them (`user_profile`), for users absent from users.json.
    var profileHandle: String?
    var profileRealName: String?
    var profileDisplayName: String?
    /// `message_changed`: the new version of the message (an array so the struct can hold itself).
    var changedMessage: [MessageRecord]
    /// `message_changed`: the byte range of the object decoded into `changedMessage`, in the buffer given to
    /// `init(json:)`; nil when `changedMessage` is empty.
    var innerMessageRange: Range<Int>?
    /// `text` held characters that could not be stored as they were (control bytes JSON forbids, invalid UTF-8,
    /// lone surrogates, NUL): they were replaced by U+FFFD and the rest kept.
    var textRepaired = false
    /// The first member whose key's bytes are `user_profile` (from its key's quote to the end of its value), in the
    /// buffer given to `init(json:)`: what the archive leaves out of the message's JSON (`JSONSlicer.text`).
    var profileMember: Range<Int>?

    /// True when the text this message stores (its revision's, for `message_changed`) was repaired.
    var isTextRepaired: Bool { textRepaired || changedMessage.first?.isTextRepaired == true }

    /// The author id: the user, else the bot.
    package var authorID: String? { user ?? botID }
}
