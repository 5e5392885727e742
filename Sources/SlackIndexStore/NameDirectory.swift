/// The names the mrkdwn normaliser substitutes for ids: users for `<@U…>`, conversations for `<#C…>`.
package struct NameDirectory: Sendable {
    /// What a mention of a user becomes.
    package struct UserNames: Sendable, Hashable {
        /// The name shown after `@` (display name, else real name, else handle).
        package var shown: String
        /// Every other name a search may use (handle, real name, display name), space-separated.
        package var others: String
    }

    package private(set) var users: [String: UserNames] = [:]
    package private(set) var channels: [String: String] = [:]

    package init() {}

    /// Adds or replaces a user's names.
    package mutating func addUser(_ user: User) {
        var others: [String] = [user.handle]
        for name in [user.realName, user.displayName] {
            if let name, !name.isEmpty, !others.contains(name) { others.append(name) }
        }
        users[user.id] = UserNames(shown: user.bestName, others: others.joined(separator: " "))
    }

    /// Adds or replaces a conversation's name.
    package mutating func addChannel(id: String, name: String) {
        channels[id] = name
    }
}
