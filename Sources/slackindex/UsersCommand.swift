import ArgumentParser
import Foundation
import SlackIndex

/// `slackindex users`: who the archive knows, by handle, name and id (issue 55: only `token users` listed them).
struct UsersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "List the archive's users: id, handle, name, and whether each is a bot, deleted or seen only in messages.",
        discussion: """
            The handles listed are what search's from:, to: and with:, history's --me and token create's --user \
            take.

            Exit status: 0 when someone is listed, 1 when nobody matches.

            Examples:
              slackindex users
              slackindex users ann
              slackindex users --json
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "Only users whose handle, name or id contains this (case and accents ignored).")
    var filter: String?

    @Flag(help: "One JSON object per user.")
    var json = false

    func run() throws {
        let users = try Self.users(in: global.openArchive(.readOnly), matching: filter)
        for user in users {
            if json { Output.json(UserJSON(user)) } else { Output.line(Self.line(user)) }
        }
        if users.isEmpty {
            if !json { Output.error("No users" + (filter.map { " match '\($0)'" } ?? " in the archive") + ".") }
            throw ExitCode(ExitStatus.failure)
        }
    }

    /// Every user of `archive` whose handle, names or id contain `filter` (folded), in id order.
    static func users(in archive: Archive, matching filter: String?) throws -> [User] {
        let wanted = filter.map(ConversationsCommand.folded)
        var found: [User] = []
        var after: String?
        while true {
            let page = try archive.store.usersPage(after: after, limit: 500)
            found += page.map(\.user).filter { user in
                guard let wanted else { return true }
                return [user.handle, user.realName, user.displayName, user.id].compactMap { $0 }
                    .contains { ConversationsCommand.folded($0).contains(wanted) }
            }
            guard page.count == 500, let last = page.last else { return found }
            after = last.user.id
        }
    }

    /// `U0123  @ann  Ann Lee  (bot, deleted)`.
    static func line(_ user: User) -> String {
        var notes: [String] = []
        if user.isBot { notes.append("bot") }
        if user.isDeleted { notes.append("deleted") }
        if user.isPlaceholder { notes.append("seen only in messages") }
        let name = user.realName.map { "  \($0)" } ?? ""
        return "\(user.id)  @\(user.handle)\(name)" + (notes.isEmpty ? "" : "  (\(notes.joined(separator: ", ")))")
    }
}

/// A user in `users --json`.
struct UserJSON: Encodable {
    var id: String
    var handle: String
    var realName: String?
    var displayName: String?
    var isBot: Bool
    var isDeleted: Bool
    var isPlaceholder: Bool

    init(_ user: User) {
        id = user.id
        handle = user.handle
        realName = user.realName
        displayName = user.displayName
        isBot = user.isBot
        isDeleted = user.isDeleted
        isPlaceholder = user.isPlaceholder
    }

    private enum CodingKeys: String, CodingKey {
        case id, handle, realName = "real_name", displayName = "display_name", isBot = "is_bot"
        case isDeleted = "is_deleted", isPlaceholder = "is_placeholder"
    }
}
