import ArgumentParser
import SlackIndex

struct UpgradeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Bring an archive written by an older slackindex up to date, so read-only commands can read it.",
        discussion: """
            Read commands (search, history, stats, serve --read-only…) never write to the archive, so an \
            archive from an older version answers "needs an upgrade" until a command that writes opens it. \
            This one does only that: it applies the pending migrations (each in its own transaction: \
            stopping it loses nothing), re-indexes the messages when the index's tokenizer changed (word \
            variants did: ~16 s per million messages) and says so. Running it on an up-to-date archive \
            changes nothing.

            Examples:
              slackindex upgrade
              slackindex --db /srv/archive.sqlite upgrade
            """)

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let path = global.databasePath
        _ = try global.openExistingArchive()
        Output.line("The archive at \(path) is up to date.")
    }
}
