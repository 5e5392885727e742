/// What the store takes in: values the import and sync layers build, with no storage detail in them.

/// A member to store, as an export listing or `users.list` describes it.
package struct UserInput: Sendable, Equatable {
    package var id: String
    package var teamID: String?
    /// The handle (`name`); the id when the source has none.
    package var handle: String
    package var realName: String?
    package var displayName: String?
    package var isBot: Bool
    package var isDeleted: Bool
    package var timeZone: String?
    /// Only known from messages (a `serve`d archive's placeholder): stored as a placeholder, never replacing a
    /// member.
    package var isPlaceholder: Bool
    /// The profile image the web UI shows (`profile.image_72`, else another size), an http(s) URL.
    package var avatarURL: String?

    package init(
        id: String, teamID: String?, handle: String, realName: String?, displayName: String?, isBot: Bool,
        isDeleted: Bool, timeZone: String?, isPlaceholder: Bool = false, avatarURL: String? = nil
    ) {
        self.isPlaceholder = isPlaceholder
        self.avatarURL = avatarURL
        self.id = id
        self.teamID = teamID
        self.handle = handle
        self.realName = realName
        self.displayName = displayName
        self.isBot = isBot
        self.isDeleted = isDeleted
        self.timeZone = timeZone
    }
}

/// A conversation to store, as an import or a sync learned it.
/// The workspace listings come from (a sync's `auth.test`): its team id and Slack domain (`acme`), when known.
package struct WorkspaceInput: Sendable, Equatable {
    package var teamID: String
    package var domain: String?

    package init(teamID: String, domain: String?) {
        self.teamID = teamID
        self.domain = domain
    }
}

package struct ConversationInput: Sendable, Equatable {
    package var slackID: String
    package var kind: ConversationKind
    package var name: String
    /// The export folder its day files are in (channel name, or the id for DMs); nil when not from an export.
    package var folder: String?
    package var created: Int64?
    package var topic: String?
    package var purpose: String?
    package var isArchived: Bool
    package var members: [String]

    package init(
        slackID: String, kind: ConversationKind, name: String, folder: String? = nil, created: Int64? = nil,
        topic: String? = nil, purpose: String? = nil, isArchived: Bool = false, members: [String] = []
    ) {
        self.slackID = slackID
        self.kind = kind
        self.name = name.isEmpty ? slackID : name
        self.folder = folder
        self.created = created
        self.topic = topic
        self.purpose = purpose
        self.isArchived = isArchived
        self.members = members
    }

    /// The name a DM is shown by: its members' handles (`@alice, @bob`), as exports and sync name DMs alike.
    package static func directMessageName(members: [String], handles: [String: String]) -> String {
        members.map { "@" + (handles[$0] ?? $0) }.joined(separator: ", ")
    }
}

/// A message deletion (`message_deleted`): the message is marked deleted, or the deletion waits for it.
package struct MessageDeletion: Sendable, Equatable {
    package var conversationRowID: Int64
    package var tsKey: Int64

    package init(conversationRowID: Int64, tsKey: Int64) {
        self.conversationRowID = conversationRowID
        self.tsKey = tsKey
    }
}

/// A `reaction_added` / `reaction_removed` event for a message of the page's conversation.
package struct ReactionEvent: Sendable, Equatable {
    package var added: Bool
    package var userID: String
    package var name: String
    package var tsKey: Int64

    package init(added: Bool, userID: String, name: String, tsKey: Int64) {
        self.added = added
        self.userID = userID
        self.name = name
        self.tsKey = tsKey
    }
}

/// How many messages a write added, changed or found unchanged, and the placeholder users it created.
package struct WriteCounts: Sendable, Equatable {
    package var added = 0
    package var updated = 0
    package var unchanged = 0
    package var placeholders = 0

    package init() {}

    /// Adds another write's counts.
    package mutating func add(_ other: WriteCounts) {
        added += other.added
        updated += other.updated
        unchanged += other.unchanged
        placeholders += other.placeholders
    }

    /// Takes away counts already told (what an import session committed beyond what it reported as written).
    package mutating func subtract(_ other: WriteCounts) {
        added -= other.added
        updated -= other.updated
        unchanged -= other.unchanged
        placeholders -= other.placeholders
    }

    mutating func count(_ outcome: UpsertOutcome) {
        switch outcome {
        case .added: added += 1
        case .updated: updated += 1
        case .unchanged: unchanged += 1
        }
    }
}
