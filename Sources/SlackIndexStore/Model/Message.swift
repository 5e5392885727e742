/// A message as read back from the archive, with what output and APIs need to show it.
public struct Message: Sendable, Hashable {
    /// The archive's row id: the keyset tie-breaker and the global time order (`MessageID`: second × 1,024 +
    /// millisecond slot), also the search index's rowid; 0 for a remote hit the archive does not hold.
    public var rowID: Int64
    /// The conversation's Slack id.
    public var conversationID: String
    /// The conversation's name as people see it (`#general`, `@alice, @bob`, `acme/#general`).
    public var conversation: String
    public var ts: String
    public var tsKey: Int64
    public var userID: String?
    /// The author's name (display, real, handle; a bot's username).
    public var user: String?
    /// The text as Slack wrote it (mrkdwn).
    public var text: String
    /// The normalised text (mentions and links resolved), used when `text` is empty (files, blocks, bots).
    public var plainText: String
    public var subtype: String?
    public var threadTS: String?
    public var replyCount: Int
    public var editedTS: String?
    public var isDeleted: Bool
    public var flags: MessageFlags
    /// The workspace's Slack domain (`acme` for acme.slack.com) when the archive knows it.
    public var workspaceDomain: String?

    public init(
        rowID: Int64, conversationID: String, conversation: String, ts: String, tsKey: Int64, userID: String?,
        user: String?, text: String, plainText: String, subtype: String?, threadTS: String?, replyCount: Int,
        editedTS: String?, isDeleted: Bool, flags: MessageFlags,
        workspaceDomain: String? = nil
    ) {
        self.rowID = rowID
        self.conversationID = conversationID
        self.conversation = conversation
        self.ts = ts
        self.tsKey = tsKey
        self.userID = userID
        self.user = user
        self.text = text
        self.plainText = plainText
        self.subtype = subtype
        self.threadTS = threadTS
        self.replyCount = replyCount
        self.editedTS = editedTS
        self.isDeleted = isDeleted
        self.flags = flags
        self.workspaceDomain = workspaceDomain
    }

    /// Slack's link to the message (`https://acme.slack.com/archives/C1/p1712345678000100`), when the domain is
    /// known; replies carry their thread.
    public var permalink: String? {
        guard let workspaceDomain, !workspaceDomain.isEmpty else { return nil }
        let base = "https://\(workspaceDomain).slack.com/archives/\(conversationID)/p"
            + String(ts.filter { $0 != "." })
        if let threadTS, threadTS != ts {
            return base + "?thread_ts=\(threadTS)&cid=\(conversationID)"
        }
        return base
    }

    /// When the message was posted, in seconds since the epoch.
    public var seconds: Int64 { tsKey / 1_000_000 }

    public static func == (lhs: Message, rhs: Message) -> Bool { lhs.rowID == rhs.rowID && lhs.ts == rhs.ts }
    public func hash(into hasher: inout Hasher) { hasher.combine(rowID) }
}

extension MessageFlags: Hashable {}
