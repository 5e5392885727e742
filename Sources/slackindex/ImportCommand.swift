import ArgumentParser
import Foundation
import SlackIndex

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import Slack exports, slackdump archives and Web API dumps into the archive.",
        discussion: """
            Streams one day file at a time; importing the same export again changes nothing and reports \
            its messages as unchanged. Malformed files are reported with their path and the rest imports. \
            What a path holds is recognised by content: an export (zip or folder), a slackdump archive \
            (its folder or slackdump.sqlite; the latest saved version of each message wins), slackdump's \
            older dump format (C….json with replies inside their parents), or API responses: \
            conversations.history/replies pages, message_changed/message_deleted event pages, JSON arrays \
            of messages, JSON lines, users.list/conversations.list/info responses and id -> name maps, in \
            any folder layout. A page's conversation is --conversation, else its messages' channel field, \
            else a folder or file name that starts with a conversation id (C…, G…, D…), else the folder's \
            name or a manifest. A conversation id the archive does not have yet is created, named by its id \
            until an export, a listing or a sync names it. Edits replace text (the newest wins), deletions \
            leave search and history, and mixing sources never duplicates a message (conversation + ts). \
            Files an export carries (slackdump's __uploads/<file id>/<name> or <conversation>/attachments/\
            <file id>-<name>) are stored beside the archive as `slackindex files` would fetch them, with no \
            download; so are the __uploads/ and __avatars/<user id>/ (members' pictures) beside a slackdump \
            archive's slackdump.sqlite.

            Exit status: 0 everything imported, 2 some files or messages were skipped, 1 nothing could be \
            imported or the import stopped (a full disk: what was committed stays, and running the same \
            import again adds the rest), 130 stopped by Ctrl-C (what was read is saved; running the same \
            import again adds the rest).

            Examples:
              slackindex import export.zip
              slackindex --db /tmp/test.sqlite import ./export-folder --json
              slackindex import ~/slackdump_20241124_120000   # slackdump archive (slackdump.sqlite)
              slackindex import api-dump/       # messages/C…/1.json, threads/C…/TS.json, users.json
              slackindex import history.jsonl   # one API response or message per line
              slackindex import page-0001.json --conversation general
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(
        help: ArgumentHelp(
            "Export zips or folders, slackdump archives, API response files or folders.", valueName: "path"))
    var paths: [String]

    @Option(
        help: ArgumentHelp(
            "The conversation sync pages belong to: a name, or an id (created if missing). Default: the "
                + "folder's name, the pages' manifest, or the id-named folders of a tree.",
            valueName: "conversation"))
    var conversation: String?

    @OptionGroup var writers: WriterOptions

    @Flag(help: "No progress output.")
    var quiet = false

    @Flag(help: "Print the summary as one JSON object.")
    var json = false

    func run() throws {
        let location = global.databasePath
        try writers.check(into: location)
        // Shown without a database URL's password.
        let path = Archive.shownLocation(location)
        // Nothing usable: said without opening (or creating) the archive.
        var opened = OpenedSources()
        if let refused = Importer.refusedSources(paths, opened: &opened) {
            return try report(refused, database: path, nothingImported: true)
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        // A database server's archive is never a file to take away.
        let isFirstImport = !Archive.isDatabaseServer(location) && !FileManager.default.fileExists(atPath: path)
        let hadFolder = FileManager.default.fileExists(atPath: folder)
        // The archive is closed when `importAll` returns, so a failed first import can take its files away.
        let summary = try importAll(opened: opened)
        let nothingImported =
            summary.sources.isEmpty
            || summary.messagesRead == 0
                && summary.conversationsAdded + summary.conversationsUpdated + summary.conversationsUnchanged == 0
        // A stopped import (a full disk) may have committed listings or messages before it stopped: never taken
        // away (issue 47's D6 deleted a new archive with 90,002 committed messages).
        if nothingImported && isFirstImport && summary.stopped == nil && !summary.interrupted {
            // Nothing worth keeping: leave no empty archive for read commands to find.
            for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
                try FileManager.default.removeItem(atPath: file)
            }
            if !hadFolder, try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty {
                try FileManager.default.removeItem(atPath: folder)
            }
        }
        try report(summary, database: path, nothingImported: nothingImported)
    }

    private func importAll(opened: OpenedSources) throws -> ImportSummary {
        let stop = StopSignal()
        let interrupts = InterruptHandler.stoppingWrites(stop)
        defer { interrupts.cancel() }
        let archive = try global.openArchive()
        let importer = Importer(archive: archive, stop: stop, writers: writers.jobs)
        let reporter = ProgressReporter(enabled: !quiet)
        let summary = importer.importPaths(paths, conversation: conversation, opened: opened) { progress in
            reporter.update(progress)
        }
        reporter.finish()
        return summary
    }

    private func report(_ summary: ImportSummary, database: String, nothingImported: Bool) throws {
        try Self.report(summary, database: database, nothingImported: nothingImported, json: json, action: "import")
    }

    /// Prints what an import (or a copy: `action`) did, as text or one JSON object, and exits as it must: 1 when it
    /// stopped or imported nothing, 130 when interrupted, 2 when something was skipped.
    static func report(
        _ summary: ImportSummary, database: String, nothingImported: Bool, json: Bool, action: String
    ) throws {
        if json {
            Output.json(summary)
        } else if nothingImported && summary.stopped == nil {
            for file in summary.skippedFiles { Output.error("Error: \(file.reason)") }
            // Every message skipped: say why here, not only in --json (issue 47's D8).
            if summary.messagesSkipped > 0 {
                // Most frequent first, ties by reason: the same output every run.
                let reasons = summary.skipReasons.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
                    .map { "\($0.key) (\(Output.count($0.value)))" }
                Output.error(
                    "Error: nothing was imported: all \(Output.count(summary.messagesSkipped)) messages were skipped: "
                        + reasons.joined(separator: "; ") + ".")
            } else if summary.skippedFiles.isEmpty {
                // Exit 1 said nothing before: a tree with an export's users.json but pages for day files.
                let ignored =
                    summary.ignoredFiles.first.map {
                        "; \(Output.count(summary.ignoredFiles.count)) file(s) were neither an export's day files "
                            + "(CHANNEL/YYYY-MM-DD.json) nor API pages, e.g. \($0)"
                    } ?? ""
                Output.error(
                    "Error: nothing was imported: no messages found in \(summary.sources.joined(separator: ", "))"
                        + ignored + ". `slackindex import --help` lists the layouts it reads.")
            }
        } else {
            printSummary(summary, database: database, action: action)
        }
        if let stopped = summary.stopped {
            // On stderr with --json too: stdout stays the one JSON object, and a person watching hears why.
            Output.error("Error: the \(action) stopped: \(stopped)")
            throw ExitCode(ExitStatus.failure)
        }
        if summary.interrupted {
            Output.error(
                "Interrupted: \(Output.count(summary.messagesAdded + summary.messagesUpdated)) messages saved"
                    + (nothingImported ? "" : " to \(database)")
                    + "; the same \(action) run again adds the rest (nothing is imported twice).")
            throw ExitCode(ExitStatus.interrupted)
        }
        if nothingImported { throw ExitCode(ExitStatus.failure) }
        if summary.hasSkips { throw ExitCode(ExitStatus.partial) }
    }

    private static func printSummary(_ s: ImportSummary, database: String, action: String) {
        for file in s.skippedFiles {
            Output.error("skipped \(file.path): \(file.reason)")
        }
        for note in s.notes { Output.error("note: \(note)") }
        if !s.ignoredFiles.isEmpty {
            Output.error(
                "note: \(s.ignoredFiles.count) file(s) that hold no Slack data (not a conversation folder's day "
                    + "files, not JSON) were not imported (e.g. \(s.ignoredFiles[0])).")
        }
        let rate = s.seconds > 0 ? Double(s.messagesRead) / s.seconds : 0
        // "1 slackdump archive", not "1 slackdump archives": the kinds are named in the plural.
        let recognised = s.recognised.sorted { $0.key < $1.key }.map { kind, count in
            "\(Output.count(count)) " + (count == 1 && kind.hasSuffix("s") ? String(kind.dropLast()) : kind)
        }
        // A stopped import (Ctrl-C, a full disk) says so: what follows is what it did before it stopped.
        let verb =
            s.interrupted || s.stopped != nil
            ? "Stopped after \(action == "copy" ? "copying" : "importing") from" : (action == "copy" ? "Copied" : "Imported")
        Output.line(
            "\(verb) \(s.sources.count) source(s) into \(database) in \(String(format: "%.1f", s.seconds)) s"
                + " (\(Output.count(Int(rate))) messages/s)")
        if !recognised.isEmpty {
            Output.line("  recognised:    " + recognised.joined(separator: ", "))
        }
        Output.line(
            "  conversations: \(s.conversationsAdded) added, \(s.conversationsUpdated) updated, "
                + "\(s.conversationsUnchanged) unchanged")
        Output.line(
            "  users:         \(s.usersAdded) added, \(s.usersUpdated) updated, \(s.placeholderUsers) placeholders")
        Output.line(
            "  messages:      \(Output.count(s.messagesAdded)) added, \(Output.count(s.messagesUpdated)) updated, "
                + "\(Output.count(s.messagesUnchanged)) unchanged, \(Output.count(s.messagesSkipped)) skipped")
        for (reason, count) in s.skipReasons.sorted(by: { $0.key < $1.key }) {
            Output.line("    skipped \(count): \(reason)")
        }
        if s.messagesRepaired > 0 {
            Output.line(
                "    repaired \(Output.count(s.messagesRepaired)): text with characters that could not be stored "
                    + "(control bytes, invalid UTF-8, NUL) kept with U+FFFD in their place")
        }
        if let a = s.attachedFiles {
            var line =
                "  attached:      \(Output.count(a.stored)) files stored (\(Output.bytes(a.bytes))), "
                + "\(Output.count(a.alreadyThere)) already there, \(Output.count(a.skipped)) not stored, "
                + "\(Output.count(a.unknown)) of no message"
            if a.avatars + a.avatarsNotStored > 0 {
                line += "; \(Output.count(a.avatars)) avatars stored (\(Output.bytes(a.avatarBytes))), "
                    + "\(Output.count(a.avatarsNotStored)) not"
            }
            Output.line(line + " (carried with the data, no download)")
        }
        if !s.skippedFiles.isEmpty {
            Output.line("  files skipped: \(s.skippedFiles.count) (listed above)")
        }
    }
}

/// Progress on stderr: a bar with rate and ETA on a terminal, a line every 5 s otherwise, nothing when quiet.
final class ProgressReporter: Sendable {
    private let line: StatusLine

    init(enabled: Bool) {
        line = StatusLine(enabled: enabled)
    }

    func update(_ p: ImportProgress) {
        guard line.due() else { return }
        // Bytes read against bytes listed: a file that grew since it was listed may take it past 1.
        let fraction = p.bytesTotal > 0 ? min(1, Double(p.bytesDone) / Double(p.bytesTotal)) : 0
        let eta = p.eta.map { String(format: "ETA %ds", Int($0.rounded())) } ?? "ETA --"
        let counts =
            "\(Output.count(p.messagesDone)) messages, \(Output.count(Int(p.rate))) msg/s, "
            + "\(p.filesDone)/\(p.filesTotal) files, \(eta)"
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        line.show("\(bar) \(Int(fraction * 100))%  \(counts)", plain: "import: \(Int(fraction * 100))%, \(counts)")
    }

    func finish() {
        line.finish()
    }
}
