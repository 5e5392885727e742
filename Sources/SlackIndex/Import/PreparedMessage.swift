/// A message ready for the store: normalised text, sort keys, flags and its compact raw JSON.
public struct PreparedMessage: Sendable {
    public var conversationRowID: Int64
    public var ts: String
    public var tsKey: Int64
    public var userID: String?
    public var username: String?
    public var subtype: String?
    public var threadTS: String?
    public var threadKey: Int64?
    public var replyCount: Int64
    public var editedTS: String?
    /// The edit's sort key, or 0 when never edited. An older revision never replaces a newer one.
    public var editedKey: Int64
    public var flags: Int64
    /// The message's text as Slack wrote it (mrkdwn).
    public var text: String
    public var searchText: String
    public var searchExtra: String
    public var raw: String
    public var hash: Int64
    public var reactions: [PreparedReaction]
    public var files: [FileRecord]
}

/// A reaction ready for the store: its users already as the JSON array stored (built on the reader thread).
public struct PreparedReaction: Sendable {
    public var name: String
    public var count: Int64
    public var usersJSON: String

    public init(_ reaction: ReactionRecord) {
        name = reaction.name
        count = Int64(reaction.count)
        usersJSON = JSONText.array(reaction.users)
    }
}

/// Bits of `message.flags`.
public struct MessageFlags: OptionSet, Sendable {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }

    public static let hasLink = MessageFlags(rawValue: 1)
    public static let hasFile = MessageFlags(rawValue: 2)
    public static let hasReaction = MessageFlags(rawValue: 4)
    public static let pinned = MessageFlags(rawValue: 8)
    public static let bot = MessageFlags(rawValue: 16)
    /// A top-level message or thread parent (not a reply).
    public static let topLevel = MessageFlags(rawValue: 32)
    /// A reply also shown in the channel.
    public static let broadcast = MessageFlags(rawValue: 64)
    public static let threadParent = MessageFlags(rawValue: 128)
    /// Stored from a remote search hit (`--save-remote`), not from an export or sync: a partial message that says
    /// nothing about the history around it. A sync or import of the same message replaces it and clears this.
    public static let savedFromSearch = MessageFlags(rawValue: 256)
}

/// What an upsert did to one message.
public enum UpsertOutcome: Sendable {
    case added, updated, unchanged
}
