import ArgumentParser
import Foundation
import SlackIndex

struct SlackIndexCommand: AsyncParsableCommand {
    /// The version `--version` prints, with the commit the binary was built from (`buildCommit`, written before
    /// each build by Plugins/CommitStamp).
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "slackindex",
        abstract: "A private, fast, searchable archive of Slack history on your own disk.",
        discussion: """
            Import a Slack export (zip or folder), then search it with Slack's own syntax and read \
            conversations page by page. Everything stays in one SQLite file (see --db).

            Examples:
              slackindex import ~/Downloads/my-workspace-export.zip
              slackindex search "release notes" --limit 5
              slackindex history '#general' --limit 20
              slackindex stats
              slackindex serve --listen 127.0.0.1:8080

            Long commands (import, sync, files, upgrade) show progress on stderr: a bar on a terminal, else a             line every 5 s ($SLACKINDEX_PROGRESS_SECONDS to change it).
            """,
        version: "slackindex \(SlackIndexCommand.version) (commit \(buildCommit))",
        subcommands: [
            ImportCommand.self, CopyCommand.self, SyncCommand.self, SearchCommand.self, HistoryCommand.self, ThreadCommand.self,
            ConversationsCommand.self, UsersCommand.self, StatsCommand.self, CheckCommand.self,
            FilesCommand.self, BenchCommand.self, TokenCommand.self, ServeCommand.self, MCPCommand.self,
            UpgradeCommand.self,
        ]
    )
}

@main
enum Main {
    /// Global options may come before the subcommand (`slackindex --db x.sqlite search foo`); argument-parser
    /// reads a subcommand's options only after its name, so they are moved there first.
    static func main() async {
        // Before anything opens an archive (SQLite's configuration is only read before its first use).
        Archive.disableSQLiteMemoryStatistics()
        let arguments = GlobalArguments.reordered(Array(CommandLine.arguments.dropFirst()))
        Output.configureColor(GlobalArguments.value(of: "--color", in: arguments), environment: ProcessInfo.processInfo.environment)
        if let unknown = UnknownCommand.find(in: arguments) {
            Output.error("Error: \(unknown.message)")
            SlackIndexCommand.exit(withError: ExitCode(ExitStatus.usage))
        }
        do {
            var command = try SlackIndexCommand.parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let explained = CommandError.explained(error)
            if let failure = explained as? CommandError, failure.status != 1 {
                Output.error("Error: \(failure.description)")
                SlackIndexCommand.exit(withError: ExitCode(failure.status))
            }
            SlackIndexCommand.exit(withError: explained)
        }
    }
}

/// Moves global options written before the subcommand to just after it.
enum GlobalArguments {
    /// Options that take a value and belong to every command.
    static let valued: Set<String> = ["--db", "--color"]

    /// The value of a valued option (`--color never` or `--color=never`) before any `--`; the last one wins.
    static func value(of option: String, in arguments: [String]) -> String? {
        var found: String?
        var index = 0
        while index < arguments.count, arguments[index] != "--" {
            if arguments[index] == option, index + 1 < arguments.count {
                found = arguments[index + 1]
                index += 1
            } else if arguments[index].hasPrefix(option + "=") {
                found = String(arguments[index].dropFirst(option.count + 1))
            }
            index += 1
        }
        return found
    }

    /// The archive the command line names (`--db`, else the default), for errors told after the command failed.
    static var databasePath: String {
        value(of: "--db", in: Array(CommandLine.arguments.dropFirst())) ?? Archive.defaultPath()
    }

    static func reordered(_ arguments: [String]) -> [String] {
        var globals: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if valued.contains(argument), index + 1 < arguments.count {
                globals += [argument, arguments[index + 1]]
                index += 2
            } else if let name = argument.split(separator: "=").first, valued.contains(String(name)) {
                globals.append(argument)
                index += 1
            } else {
                break
            }
        }
        guard index < arguments.count else { return arguments }
        // The whole subcommand path (`bench search`), then the globals.
        var path = [arguments[index]]
        index += 1
        let nested: Set = ["bench", "token"]
        // The word after `bench` or `token` is its command even when misspelt (UnknownCommand then names it).
        if nested.contains(path[0]), index < arguments.count, !arguments[index].hasPrefix("-") {
            path.append(arguments[index])
            index += 1
        }
        var rest = Array(arguments[index...])
        if path == ["search"] { rest = excludedWordsLast(rest) }
        return path + globals + rest
    }

    /// Slack's `-word` exclusions look like short flags to argument-parser: move them behind `--`.
    static func excludedWordsLast(_ arguments: [String]) -> [String] {
        guard !arguments.contains("--") else { return arguments }
        var options: [String] = []
        var excluded: [String] = []
        for argument in arguments {
            let isExcludedWord =
                argument.count > 1 && argument.hasPrefix("-") && !argument.hasPrefix("--") && argument != "-h"
                && !(argument.dropFirst().first?.isNumber ?? false)
            if isExcludedWord { excluded.append(argument) } else { options.append(argument) }
        }
        return excluded.isEmpty ? arguments : options + ["--"] + excluded
    }
}
