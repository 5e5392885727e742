import ArgumentParser
import Foundation
import SlackIndex

struct UpgradeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Bring an archive written by an older slackindex up to date, so read-only commands can read it.",
        discussion: """
            Read commands (search, history, stats, serve --read-only…) never write to the archive, so an \
            archive from an older version answers "needs an upgrade" until a command that writes opens it. \
            This one does only that: it applies the pending migrations (each in its own transaction: \
            stopping it loses nothing; each rebuild of the search index (in small leaves, with word pairs, \
            with each message's conversation and author) takes 10-15 s per million messages, counting the index's \
            words ~1 s), re-indexes the messages when the index's tokenizer changed (word \
            variants did: ~16 s per million messages), packs the messages' stored JSON when the archive \
            predates packing, renumbers the messages when their ids predate millisecond ids (one transaction, \
            19-25 s per million messages with the space given back; the write-ahead log grows to about the \
            archive's size meanwhile, 8 GB for 10 million messages), looks for messages that earlier versions \
            left out of the search index after an edit (2.5-4 s per million messages) and re-indexes only when \
            it finds one, packs the stored JSON of blocks written \
            before text slices again (32,768 messages a transaction, with progress; ~22 s per million messages \
            with the space given back; only this command does it, as older blocks read as they always did), \
            and when it changed anything it then gives the space the old layout took back to the disk \
            (SQLite's VACUUM: it needs free disk for a copy of the archive; --no-vacuum leaves the space in \
            the file, where later imports reuse it) and says the file's size before and after. Messages whose \
            stored JSON cannot be read back are left as they were and make the exit status 2. An import or a \
            sync upgrades an archive too but does not repack and leaves that space in the file: --vacuum gives \
            it back then. Running it on an up-to-date archive changes nothing.

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
        // The size the user had, before migrations and repacking grew the file (VACUUM then gives back more than
        // what the upgrade saved: the 1M archive's repacking grew it 638 → 731 MB, and ended at 573 MB).
        let sizeBefore = Self.fileSize(path)
        let archive = try global.openExistingArchive(vacuumHint: false)
        let repacked = try repack(archive)
        // A damaged message left in an old block is found again by every run: only moving some counts as upgrading.
        let upgraded = archive.store.upgradedOnOpen || (repacked?.messages ?? 0) > 0
        if (upgraded || vacuum) && !noVacuum {
            Output.error(
                upgraded
                    ? "Upgraded; giving the space the old layout took back to the disk…"
                    : "Giving the file's free space back to the disk…")
            let reclaimed = try archive.store.reclaimFreeSpace()
            if reclaimed > 0 {
                let change =
                    if let sizeBefore, let sizeAfter = Self.fileSize(path) {
                        "\(Output.bytes(sizeBefore)) → \(Output.bytes(sizeAfter))"
                            + (sizeAfter < sizeBefore ? ", \(Output.bytes(sizeBefore - sizeAfter)) smaller" : "")
                    } else {
                        "\(Output.bytes(reclaimed)) smaller"
                    }
                Output.line("The archive at \(path) is up to date (\(change)).")
                try exitForUnreadable(repacked)
                return
            }
        }
        Output.line("The archive at \(path) is up to date.")
        try exitForUnreadable(repacked)
    }

    /// Packs the JSON of blocks written before text slices again, with progress on stderr; nil when there were none.
    private func repack(_ archive: Archive) throws -> RepackSummary? {
        let line = StatusLine(enabled: true, terminalInterval: 0.5)
        let summary = try archive.store.repackOldBlocks { done, total in
            guard total > 0, line.due() else { return }
            line.show("Repacking stored JSON: \(done * 100 / total)% (\(Output.count(done)) of \(Output.count(total)))")
        }
        line.finish()
        if let summary {
            if summary.messages > 0 {
                Output.error(
                    "Repacked the stored JSON of \(Output.count(summary.messages)) message(s): "
                        + "\(Output.bytes(summary.bytesBefore)) → \(Output.bytes(summary.bytesAfter)) of blocks.")
            }
            if summary.unreadable > 0 {
                Output.error(
                    "\(Output.count(summary.unreadable)) message(s) were left as they were: their stored JSON could "
                        + "not be read back (a damaged block or row), and serving them reports that.")
            }
        }
        return summary
    }

    /// The file's size, nil when it cannot be read (then the summary says only what VACUUM gave back).
    private static func fileSize(_ path: String) -> Int64? {
        do {
            return (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        } catch {
            return nil
        }
    }

    private func exitForUnreadable(_ summary: RepackSummary?) throws {
        if let summary, summary.unreadable > 0 { throw ExitCode(ExitStatus.partial) }
    }
}
