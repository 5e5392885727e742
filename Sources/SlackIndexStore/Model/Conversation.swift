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
    /// Channel name; for DMs the members' handles (`@ann, @bo`); for group DMs Slack's `mpdm-ann--bo--cy-1`.
    public var name: String
    public var topic: String?
    public var purpose: String?
    public var isArchived: Bool
    public var members: [String]
    /// The workspace's Slack domain (`acme`), when known: permalinks need it.
    public var workspaceDomain: String?
    /// The workspace's name (domain, else team id) when another workspace in the archive holds a conversation of
    /// the same name; nil otherwise. `displayName` starts with it (`acme/#general`).
    public var workspace: String?
    /// The Slack team id of the conversation's workspace, when the archive knows it (what `copy` keeps).
    public var workspaceID: String?

    public init(
        rowID: Int64, id: String, kind: ConversationKind, name: String, topic: String? = nil,
        purpose: String? = nil, isArchived: Bool = false, members: [String] = [], workspaceDomain: String? = nil,
        workspace: String? = nil, workspaceID: String? = nil
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
        self.workspace = workspace
        self.workspaceID = workspaceID
    }

    /// How the conversation is shown to people: `#name` for channels, the members' handles for DMs and group DMs
    /// (`@ann, @bo`; a group DM's from Slack's `mpdm-ann--bo--cy-1`), after `workspace/` when two workspaces
    /// share the name (`acme/#general`).
    public var displayName: String {
        let shown: String
        switch kind {
        case .channel, .private: shown = "#" + name
        case .dm: shown = name
        case .mpim:
            shown = Conversation.groupMessageMembers(name).map { $0.map { "@" + $0 }.joined(separator: ", ") } ?? name
        }
        guard let workspace, !workspace.isEmpty else { return shown }
        return workspace + "/" + shown
    }

    /// The handles in a group DM's Slack name, `mpdm-ann.lee--bo.kim--cy.wu-1` (handles joined by `--`, then `-`
    /// and a number); nil for a name not of that shape.
    /// - Complexity: O(n) in the name's length.
    public static func groupMessageMembers(_ name: String) -> [String]? {
        guard name.hasPrefix("mpdm-"), let dash = name.lastIndex(of: "-") else { return nil }
        let number = name[name.index(after: dash)...]
        guard !number.isEmpty, number.allSatisfy(\.isASCII), number.allSatisfy(\.isNumber) else { return nil }
        var handles: [String] = []
        var rest = name[name.index(name.startIndex, offsetBy: 5)..<dash]
        while let separator = rest.firstRange(of: "--") {
            handles.append(String(rest[..<separator.lowerBound]))
            rest = rest[separator.upperBound...]
        }
        handles.append(String(rest))
        guard handles.count >= 2, !handles.contains(where: \.isEmpty) else { return nil }
        return handles
    }
}
