import ArgumentParser
import Foundation
import SlackIndex

/// `slackindex token …`: the tokens `serve` accepts.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Make, list and revoke the tokens `slackindex serve` accepts.",
        discussion: """
            A token acts as one user of the archive: it sees public channels and the private channels, \
            DMs and group DMs that user is a member of (--admin: every conversation). The archive keeps only \
            a hash of each token: `create` prints it once.

            Examples:
              slackindex token users
              TOKEN=$(slackindex token create --user U0123ABCD --label laptop)
              slackindex token create --user U0123ABCD --admin
              slackindex token list
              slackindex token revoke 3
            """,
        subcommands: [Create.self, List.self, Revoke.self, Users.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a token and print it (only the token, on stdout).",
            discussion: """
                Example:
                  TOKEN=$(slackindex token create --user U0123ABCD)
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("The archive user the token acts as: an id (U…) or a handle.", valueName: "user"))
        var user: String

        @Flag(help: "Let the token see every conversation, not only its user's.")
        var admin = false

        @Option(help: ArgumentHelp("A note to recognise the token by in `token list`.", valueName: "text"))
        var label: String?

        func run() throws {
            let archive = try global.openExistingArchive()
            let (token, _) = try archive.createToken(
                userID: try TokenCommand.userID(user, in: archive), isAdmin: admin, label: label)
            Output.line(token)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the tokens (never their secrets).")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "One JSON object per token.")
        var json = false

        func run() throws {
            let tokens = try global.openArchive(.readOnly).tokens()
            for token in tokens {
                if json {
                    Output.json(token)
                } else {
                    let label = token.label.map { "  \($0)" } ?? ""
                    Output.line(
                        "\(token.id)  \(token.userID)\(token.isAdmin ? "  admin" : "")  "
                            + Output.localTime(token.created) + label)
                }
            }
            if tokens.isEmpty && !json { Output.error("No tokens. `slackindex token create --user U…` makes one.") }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Remove a token: it stops working at once.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The token's id, as `token list` shows it.")
        var id: Int64

        func run() throws {
            try global.openExistingArchive().revokeToken(id: id)
        }
    }

    struct Users: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "users", abstract: "List the archive's users a token can act as.")

        @OptionGroup var global: GlobalOptions

        func run() throws {
            // The same list as `slackindex users` (kept here: the tokens' help names it).
            for user in try UsersCommand.users(in: global.openArchive(.readOnly), matching: nil) {
                Output.line(UsersCommand.line(user))
            }
        }
    }
}

extension TokenCommand {
    /// `value` when the archive has a user with that id, else the user a handle or name names (`andrew.jones`,
    /// `@andrew.jones`, "Andrew Jones"), as `from:` reads it.
    ///
    /// - Throws: `SearchError.unknownUser` (with the closest handles) or `.ambiguousUser`.
    static func userID(_ value: String, in archive: Archive) throws -> String {
        if try archive.store.archivedUsers(ids: [value])[value] != nil { return value }
        return try SearchEngine(archive: archive).userID(named: value)
    }
}
