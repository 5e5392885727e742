/// A workspace member (or a placeholder for an id seen in messages but absent from `users.json`).
public struct User: Sendable, Hashable, Codable {
    /// Slack's id (`U…`, `W…`, `B…` for bots without a user).
    public var id: String
    /// The handle (`name` in users.json).
    public var handle: String
    public var realName: String?
    public var displayName: String?
    public var isBot: Bool
    public var isDeleted: Bool
    /// True when the archive only knows the id (e.g. `USLACKBOT`, Slack Connect users).
    public var isPlaceholder: Bool

    public init(
        id: String, handle: String, realName: String? = nil, displayName: String? = nil, isBot: Bool = false,
        isDeleted: Bool = false, isPlaceholder: Bool = false
    ) {
        self.id = id
        self.handle = handle
        self.realName = realName
        self.displayName = displayName
        self.isBot = isBot
        self.isDeleted = isDeleted
        self.isPlaceholder = isPlaceholder
    }

    /// The name people see in Slack: display name, else real name, else handle.
    public var bestName: String {
        if let displayName, !displayName.isEmpty { return displayName }
        if let realName, !realName.isEmpty { return realName }
        return handle
    }
}
