import ArgumentParser
import Foundation
import SlackIndex

/// `slackindex mcp`: the archive as a Model Context Protocol server on stdio, for AI assistants.
struct MCPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve the archive to AI assistants (Claude, editors) over the Model Context Protocol on stdio.",
        discussion: """
            An MCP client starts this command and talks to it on stdin/stdout; it is not run by hand. The \
            archive is opened read-only. The assistant sees it as one user: --as USER (public channels, and \
            the private channels, DMs and group DMs USER is in), or --token TOKEN (what `serve` lets that token \
            see; an admin token sees everything). Without either: $SLACKINDEX_ME, else "me" in the config file.

            Tools: search (Slack's query syntax), messages_around, history (between dates, with cursors), \
            thread, conversations, users, archive_facts. Resources: slackindex://conversation/ID and \
            slackindex://thread/ID/TS. Prompts: summarise_conversation, find_decision. docs/mcp.md has the \
            client configuration (Claude Desktop, Claude Code) and each tool's arguments.

            Examples:
              claude mcp add slackindex -- slackindex mcp --db ~/slack/archive.sqlite --as @alice
              slackindex mcp --token "$(slackindex token create --user U0123ABCD)"
            """)

    @OptionGroup var global: GlobalOptions

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "The user whose view the assistant gets: a handle, name or id (default: $SLACKINDEX_ME, else \"me\" in "
                + "the config file).", valueName: "user"))
    var asUser: String?

    @Option(
        help: ArgumentHelp(
            "A token made with `slackindex token create`: the assistant sees what it sees in `serve`.",
            valueName: "token"))
    var token: String?

    func validate() throws {
        if asUser != nil, token != nil { throw ValidationError("Give --as or --token, not both.") }
    }

    /// Checks the archive and the viewer here (the errors are this command's), then replaces this process with
    /// `slackindex-mcp` from the same folder, which serves (Package.swift says why it is apart).
    func run() throws {
        let archive = try global.openArchive(.readOnly)
        var arguments = ["--db", archive.path, "--version-string", SlackIndexCommand.version]
        switch try viewer(archive) {
        case .user(let id): arguments += ["--user", id]
        case .token(let token): setenv("SLACKINDEX_MCP_TOKEN", token, 1)
        }
        let server = Self.serverExecutable()
        guard FileManager.default.isExecutableFile(atPath: server) else {
            throw CommandError(
                description: "\(server) is missing: build it beside slackindex (`swift build -c release --product "
                    + "slackindex-mcp`), or install both with `scripts/install.sh`.",
                status: 1)
        }
        let argv = ([server] + arguments).map { strdup($0) } + [nil]
        execv(server, argv)
        throw CommandError(description: "Could not start \(server): \(String(cString: strerror(errno))).", status: 1)
    }

    /// `slackindex-mcp` in the folder of this executable (links resolved).
    static func serverExecutable() -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("slackindex-mcp").path
    }

    /// Whom the assistant answers as.
    enum Viewer {
        case user(String)
        case token(String)
    }

    /// The viewer: `--token` (checked now, and again on every call), else `--as`, else `$SLACKINDEX_ME` or the
    /// config file's `me`.
    ///
    /// - Throws: a `CommandError` when the token is not the archive's or no user is named.
    private func viewer(_ archive: Archive) throws -> Viewer {
        if let token {
            guard try archive.verifyToken(token) != nil else {
                throw CommandError(
                    description: "--token is not a token of \(archive.path): make one with `slackindex token create`.",
                    status: ExitStatus.usage)
            }
            return .token(token)
        }
        guard let name = try asUser ?? ProcessInfo.processInfo.environment["SLACKINDEX_ME"] ?? Config.load().me else {
            throw CommandError(
                description: "mcp answers as one user: give --as USER (a handle, name or id) or --token TOKEN.",
                status: ExitStatus.usage)
        }
        return .user(try SearchEngine(archive: archive).userID(named: name))
    }
}
