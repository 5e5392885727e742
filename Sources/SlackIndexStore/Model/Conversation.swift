/// The kind of a Slack conversation, as the export's listing files tell it.
public enum ConversationKind: String, Sendable, Codable, CaseIterable {
    /// A public channel (`channels.json`).
    case channel
    /// A private channel (`groups.json`).
    case `private`
    /// A 1:1 direct message (`dms.json`).
    case dm
    /// A group direct message (`mpims.json`).
    case mpim
}

/// A conversation as stored in the archive.
public struct Conversation: Sendable, Hashable, Codable {
    /// The archive's own row id.
    public var rowID: Int64
    /// Slack's id (`C…`, `G…`, `D…`).
    public var id: String
    public var kind: ConversationKind
    /// Channel name; for DMs the members' handles (`@ann, @bo`).
    public var name: String
    public var topic: String?
    public var purpose: String?
    public var isArchived: Bool
    public var members: [String]
    /// The workspace's Slack domain (`acme`), when known: permalinks need it.
    public var workspaceDomain: String?

    public init(
        rowID: Int64, id: String, kind: ConversationKind, name: String, topic: String? = nil,
        purpose: String? = nil, isArchived: Bool = false, members: [String] = [], workspaceDomain: String? = nil
    ) {
        self.rowID = rowID
        self.id = id
        self.kind = kind
        self.name = name
        self.topic = topic
        self.purpose = purpose
        self.isArchived = isArchived
        self.members = members
        self.workspaceDomain = workspaceDomain
    }

    /// How the conversation is shown to people: `#name` for channels, the name for DMs and group DMs.
    public var displayName: String {
        switch kind {
        case .channel, .private: "#" + name
        case .dm, .mpim: name
        }
    }
}
