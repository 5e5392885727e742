import ArgumentParser
import Foundation
import SlackIndex

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the archive.",
        discussion: """
            Words and "exact phrases" are ranked by relevance (bm25). Every word must match.

            Examples:
              slackindex search deploy
              slackindex search '"release notes" friday' --limit 5 --json
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The query.")
    var query: [String]

    @Option(help: "How many results at most.")
    var limit = 20

    @Flag(help: "One JSON object per result line.")
    var json = false

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1.") }
    }

    func run() throws {
        let text = query.joined(separator: " ")
        guard let match = BasicQuery.ftsExpression(text) else {
            Output.error("Nothing to search for in '\(text)': give at least one word.")
            throw ExitCode(64)
        }
        let archive = try global.openArchive()
        let hits = try archive.search(match: match, limit: limit)
        if json {
            for hit in hits { Output.json(MessageJSON(message: hit.message, snippet: hit.snippet, score: hit.score)) }
            return
        }
        if hits.isEmpty {
            Output.error("No messages match '\(text)'.")
            return
        }
        for hit in hits {
            let m = hit.message
            let header = "\(Output.bold(m.conversation))  \(m.user ?? "unknown")  "
                + Output.dim(Output.localTime(m.seconds))
            Output.line(header)
            Output.line("  " + Output.highlighted(Output.oneLine(hit.snippet, width: 400), color: Output.stdoutIsTTY))
        }
    }
}
