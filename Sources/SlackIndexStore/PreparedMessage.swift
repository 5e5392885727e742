/// A message ready for the store: normalised text, sort keys, flags and its compact raw JSON.
package struct PreparedMessage: Sendable {
    package var conversationRowID: Int64
    package var ts: String
    package var tsKey: Int64
    package var userID: String?
    package var username: String?
    package var subtype: String?
    package var threadTS: String?
    package var threadKey: Int64?
    package var replyCount: Int64
    package var editedTS: String?
    /// The edit's sort key, or 0 when never edited. An older revision never replaces a newer one.
    package var editedKey: Int64
    package var flags: Int64
    /// The message's text as Slack wrote it (mrkdwn).
    package var text: String
    package var searchText: String
    package var searchExtra: String
    /// The message's JSON; empty once packed (`rawLocation`), when the batch's block holds it.
    package var raw: String
    /// Where the JSON lies in its batch's packed blocks (`ImportBatch.packRaws`); nil: stored inline (`raw`).
    package var rawLocation: RawLocation?
    package var hash: Int64
    package var reactions: [PreparedReaction]
    package var files: [PreparedFile]
    /// The row as a backend sends it, made on the reader's thread (`ImportSink.prepareForWrite`): PostgreSQL's COPY
    /// text from `ts` on, so that the writer thread, which waits on the server, only adds the keys. Nil: none made.
    package var encodedRow: [UInt8]?

    package init(
        conversationRowID: Int64, ts: String, tsKey: Int64, userID: String?, username: String?, subtype: String?,
        threadTS: String?, threadKey: Int64?, replyCount: Int64, editedTS: String?, editedKey: Int64, flags: Int64,
        text: String, searchText: String, searchExtra: String, raw: String, hash: Int64, reactions: [PreparedReaction],
        files: [PreparedFile]
    ) {
        self.conversationRowID = conversationRowID
        self.ts = ts
        self.tsKey = tsKey
        self.userID = userID
        self.username = username
        self.subtype = subtype
        self.threadTS = threadTS
        self.threadKey = threadKey
        self.replyCount = replyCount
        self.editedTS = editedTS
        self.editedKey = editedKey
        self.flags = flags
        self.text = text
        self.searchText = searchText
        self.searchExtra = searchExtra
        self.raw = raw
        self.hash = hash
        self.reactions = reactions
        self.files = files
    }
}

/// A reaction ready for the store: its users already as the JSON array stored (built on the reader thread).
package struct PreparedReaction: Sendable {
    package var name: String
    package var count: Int64
    package var usersJSON: String

    package init(name: String, count: Int, users: [String]) {
        self.name = name
        self.count = Int64(count)
        usersJSON = JSONText.array(users)
    }
}

/// A file's metadata as a message carries it (URLs without their access tokens): what the importer reads and the
/// store keeps (the file's bytes are `FileArchive`'s).
package struct PreparedFile: Sendable, Hashable {
    package var id: String?
    package var name: String?
    package var title: String?
    package var mimetype: String?
    package var filetype: String?
    package var size: Int64?
    package var mode: String?
    package var urlPrivate: String?
    package var urlPrivateDownload: String?
    package var permalink: String?

    package init(
        id: String? = nil, name: String? = nil, title: String? = nil, mimetype: String? = nil,
        filetype: String? = nil, size: Int64? = nil, mode: String? = nil, urlPrivate: String? = nil,
        urlPrivateDownload: String? = nil, permalink: String? = nil
    ) {
        self.id = id
        self.name = name
        self.title = title
        self.mimetype = mimetype
        self.filetype = filetype
        self.size = size
        self.mode = mode
        self.urlPrivate = urlPrivate
        self.urlPrivateDownload = urlPrivateDownload
        self.permalink = permalink
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
package enum UpsertOutcome: Sendable {
    case added, updated, unchanged
}
