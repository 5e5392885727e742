import ArgumentParser
import SlackIndex

/// A first argument that names no command (`slackindex serach foo`): argument-parser only says "unexpected
/// arguments", so the closest command names are suggested here, as misspelt flags already are.
struct UnknownCommand {
    var word: String
    var closest: [String]
    /// The commands at that level, for the message when nothing is close.
    var commands: [String]
    /// `bench` for `slackindex bench serch`, empty at the top level.
    var parent: String

    var message: String {
        let full = parent.isEmpty ? "slackindex" : "slackindex \(parent)"
        var text = "Unknown command '\(word)'"
        if let first = closest.first {
            let others = closest.dropFirst().map { "'\($0)'" }
            text += "; did you mean '\(first)'" + (others.isEmpty ? "" : " (or \(others.joined(separator: ", ")))") + "?"
        } else {
            text += "."
        }
        return text + " The commands are \(commands.joined(separator: ", ")); `\(full) --help` says what each does."
    }

    /// The unknown command word in `arguments` (already reordered: the command path first), if any.
    static func find(in arguments: [String]) -> UnknownCommand? {
        find(in: arguments[...], under: SlackIndexCommand.self, parent: [])
    }

    private static func find(
        in arguments: ArraySlice<String>, under command: any ParsableCommand.Type, parent: [String]
    ) -> UnknownCommand? {
        let subcommands = command.configuration.subcommands
        guard !subcommands.isEmpty, let word = arguments.first, !word.hasPrefix("-") else { return nil }
        var names: [String] = []
        for subcommand in subcommands {
            let name = subcommand._commandName
            if name == word || subcommand.configuration.aliases.contains(word) {
                return find(in: arguments.dropFirst(), under: subcommand, parent: parent + [name])
            }
            names.append(name)
        }
        if word == "help" { return nil }
        let shown = subcommands.map { sub in
            ([sub._commandName] + sub.configuration.aliases.map { "(\($0))" }).joined(separator: " ")
        }
        // Only the commands at this level: `help` is argument-parser's own and needs no suggestion.
        let closest = ClosestNames.closest(to: word, among: names, limit: 2)
        return UnknownCommand(word: word, closest: closest, commands: shown, parent: parent.joined(separator: " "))
    }
}
