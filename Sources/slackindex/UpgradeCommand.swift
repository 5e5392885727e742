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
            variants did: ~16 s per million messages), packs the messages' stored JSON when the archive \
            predates packing, renumbers the messages when their ids predate millisecond ids (one transaction, \
            19-25 s per million messages with the space given back; the write-ahead log grows to about the \
            archive's size meanwhile, 8 GB for 10 million messages), and when it changed anything it then \
            gives the space the old layout took back to the disk (SQLite's VACUUM: it needs free disk for a \
            copy of the archive; --no-vacuum \
            leaves the space in the file, where later imports reuse it). An import or a sync upgrades an archive \
            too but leaves that space in the file: --vacuum gives it back then. Running it on an up-to-date \
            archive changes nothing.

            Examples:
              slackindex upgrade
              slackindex --db /srv/archive.sqlite upgrade
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Leave free space in the file instead of giving it back to the disk.")
    var noVacuum = false

    @Flag(help: "Give free space back to the disk even when nothing needed an upgrade (after an import upgraded it).")
    var vacuum = false

    func validate() throws {
        if vacuum && noVacuum { throw ValidationError("--vacuum and --no-vacuum contradict each other.") }
    }

    func run() throws {
        let path = global.databasePath
        let archive = try global.openExistingArchive(vacuumHint: false)
        if (archive.upgradedOnOpen || vacuum) && !noVacuum {
            Output.error(
                archive.upgradedOnOpen
                    ? "Upgraded; giving the space the old layout took back to the disk…"
                    : "Giving the file's free space back to the disk…")
            let reclaimed = try archive.reclaimFreeSpace()
            if reclaimed > 0 {
                Output.line("The archive at \(path) is up to date (\(Output.bytes(reclaimed)) smaller).")
                return
            }
        }
        Output.line("The archive at \(path) is up to date.")
    }
}
