import ArgumentParser
import Foundation
import SlackIndex
import SlackIndexStore

/// `slackindex copy`: one archive's conversations, users and messages into another, either backend either way.
struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy an archive into another: SQLite into PostgreSQL, PostgreSQL into an SQLite file, or a view.",
        discussion: """
            Copies the workspaces, users, conversations and every message (edits as last seen, deletions, \
            reactions, threads) of the archive (--from, else --db) into --to, through the same pipeline as an \
            import: a message already there is left as it is, so a copy that stopped (Ctrl-C, a lost connection, \
            kill -9) is completed by running it again, and running it twice adds nothing. The source is opened \
            read-only.

            With --as USER the copy holds only what that member may read: public channels, and the private \
            channels, DMs and group DMs they are a member of (what a token of theirs sees in `serve`), so a person \
            can take their own view offline.

            Not copied: `serve` tokens (make new ones for the copy), sync progress and stored files.

            Examples:
              slackindex copy --to postgresql://me@db.internal/slack
              slackindex copy --from postgresql://me@db/slack --to mine.sqlite \\
                --as U012AB3CD
              slackindex --db team.sqlite copy --to postgres://me@db/slack --json

            Exit status: 0 copied, 1 error (nothing readable, a failed write: what was committed stays), \
            2 some messages skipped or no archive to copy, 130 interrupted (run it again to finish).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The archive to copy (default: --db).", valueName: "path"))
    var from: String?

    @Option(
        help: ArgumentHelp(
            "The archive to copy into: an SQLite file (created if missing) or postgresql://USER@HOST:PORT/DB.",
            valueName: "path"))
    var to: String

    @Option(name: .customLong("as"), help: ArgumentHelp("Copy only what this member may read.", valueName: "user-id"))
    var user: String?

    @OptionGroup var writers: WriterOptions

    @Flag(help: "No progress output.")
    var quiet = false

    @Flag(help: "Print the summary as one JSON object.")
    var json = false

    func run() throws {
        let sourcePath = from ?? global.databasePath
        guard Self.canonical(sourcePath) != Self.canonical(to) else {
            throw ValidationError("--from and --to name the same archive (\(Archive.shownLocation(to))).")
        }
        try writers.check(into: to)
        let source = try Archive(path: sourcePath, access: .readOnly)
        let stop = StopSignal()
        let interrupts = InterruptHandler.stoppingWrites(stop)
        defer { interrupts.cancel() }
        let destination = try Archive(path: to)
        let line = StatusLine(enabled: !quiet)
        let importer = Importer(archive: destination, stop: stop, writers: writers.jobs)
        let summary = try importer.copy(from: source.store, as: user) { p in
            guard line.due() else { return }
            let text =
                "\(p.conversationsDone)/\(p.conversations) conversations, \(Output.count(p.messages)) messages, "
                + p.current
            line.show("copy: " + text, plain: "copy: " + text)
        }
        line.finish()
        let nothing = summary.messagesRead == 0 && summary.conversationsAdded + summary.conversationsUpdated
            + summary.conversationsUnchanged == 0
        if nothing && summary.stopped == nil && !summary.interrupted {
            let whose = user.map { " that \($0) may read" } ?? ""
            throw ValidationError("\(Archive.shownLocation(sourcePath)) holds no conversations\(whose): nothing to copy.")
        }
        try ImportCommand.report(
            summary, database: Archive.shownLocation(to), nothingImported: false, json: json, action: "copy")
    }

    /// A location compared as what it names: a file's absolute path, a URL as written.
    private static func canonical(_ location: String) -> String {
        Archive.isDatabaseServer(location) ? location : URL(fileURLWithPath: location).standardizedFileURL.path
    }
}
