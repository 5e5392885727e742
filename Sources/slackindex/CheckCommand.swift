import ArgumentParser
import Foundation
import SlackIndex

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Verify the archive end to end: what it gives back is what it was given.",
        discussion: """
            Read-only: SQLite's integrity check; every packed block of message JSON inflates; every message's \
            stored JSON reads back as one JSON object with the row's ts, author, text, subtype, edit and file \
            ids (what serve, sync and the web UI give back); the search index holds exactly what the messages' \
            text gives; the kept counts (messages per conversation, messages per word of the index) equal a \
            recount; thread parents count the replies held; reactions and files belong to messages. Exit status 0 when healthy (blocks no message points into are noted: \
            space only), 2 with a report of what is damaged and how to repair it.

            --repair opens the archive for writing and rebuilds what the archive itself holds (the search \
            index, counts, word counts, reply counts, attachment flags, unused blocks). Messages whose stored JSON is \
            damaged are marked so that importing the same source again rewrites them.

            Examples:
              slackindex check
              slackindex check --json
              slackindex check --repair
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print one JSON object.")
    var json = false

    @Flag(help: "Rebuild what the archive holds the data for; mark messages to be rewritten by the same import.")
    var repair = false

    func run() throws {
        // --repair writes, but only to an archive that is there: a mistyped --db must not create an empty one.
        let archive = try repair ? global.openExistingArchive() : global.openArchive(.readOnly)
        let checker = ArchiveChecker(archive: archive)
        // Each step's name as it starts, on a terminal only (a check of 1M messages takes tens of seconds).
        let status = StatusLine(enabled: !json && Output.stderrIsTTY, terminalInterval: 0)
        let report = try checker.run { step in if status.due() { status.show("checking \(step)…") } }
        status.finish()
        var outcome: RepairOutcome?
        if repair && !report.findings.isEmpty { outcome = try checker.repair(report) }
        if json {
            Output.json(CheckJSON(report: report, repair: outcome))
        } else {
            print(report, repair: outcome, path: archive.path)
        }
        if !report.healthy { throw ExitCode(ExitStatus.partial) }
        if repair, let outcome, outcome.deletedBlocks > 0, !json {
            Output.line("Gave back the space of \(Output.count(outcome.deletedBlocks)) unused blocks.")
        }
    }

    private func print(_ report: CheckReport, repair: RepairOutcome?, path: String) {
        let checked =
            "\(Output.count(report.messages)) messages and \(Output.count(report.blocks)) packed blocks in "
            + String(format: "%.1f s", report.seconds)
        Output.line((report.healthy ? "Healthy" : "Damaged") + ": \(path) (\(checked)).")
        for finding in report.findings where !finding.isDamage {
            Output.line(
                "  note: \(Output.count(finding.count)) — \(finding.problem) `slackindex check --repair` gives it "
                    + "back.")
        }
        guard !report.healthy else { return }
        for finding in report.findings where finding.isDamage {
            Output.line("  \(finding.area): \(Output.count(finding.count)) — \(finding.problem)")
            for example in finding.examples { Output.line("      \(example)") }
            Output.line("    repair: \(finding.repair.rawValue)")
        }
        guard let repair else {
            Output.line("Run `slackindex check --repair` to rebuild what the archive holds the data for.")
            return
        }
        var done: [String] = []
        if repair.rebuiltIndex { done.append("search index rebuilt") }
        if repair.recountedWords { done.append("word counts recounted") }
        if repair.recountedConversations > 0 { done.append("counts of \(repair.recountedConversations) conversations") }
        if repair.refreshedReplyCounts { done.append("reply counts raised") }
        if repair.repairedAttachments { done.append("reactions and files repaired") }
        if repair.deletedBlocks > 0 { done.append("\(Output.count(repair.deletedBlocks)) unused blocks deleted") }
        let repaired = done.isEmpty ? "nothing the archive could rebuild" : done.joined(separator: ", ")
        Output.line("Repaired: \(repaired).")
        if repair.markedForReimport > 0 {
            Output.line(
                "\(Output.count(repair.markedForReimport)) messages were marked: import the same export or dump "
                    + "again (or sync) to rewrite their JSON, then run `slackindex check` again.")
        } else {
            Output.line("Run `slackindex check` again to confirm.")
        }
    }
}

/// `check --json`: the report, and what `--repair` did.
private struct CheckJSON: Encodable {
    var report: CheckReport
    var repair: RepairOutcome?

    enum CodingKeys: String, CodingKey { case repair }

    func encode(to encoder: any Encoder) throws {
        try report.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(repair, forKey: .repair)
    }
}
