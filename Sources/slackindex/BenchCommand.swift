import ArgumentParser
import Foundation
@_spi(Benchmarks) import SlackIndex

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure import, search and timeline speed on your own archive.",
        discussion: """
            Examples:
              slackindex bench import export.zip
              slackindex bench search --runs 3 --json
              slackindex bench timeline
            """,
        subcommands: [Import.self, Search.self, TimelineBenchCommand.self])

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import an export into a scratch database: messages/s, MB/s, peak memory, time per phase.",
            discussion: """
                Examples:
                  slackindex bench import export.zip --json
                """)

        @Argument(help: "An export zip or folder.")
        var path: String

        @Flag(help: "Print one JSON object.")
        var json = false

        func run() throws {
            let reporter = ProgressReporter(enabled: !json)
            let result = try ImportBench(path: path).run { reporter.update($0) }
            reporter.finish()
            if json { return Output.json(result) }
            Output.line("import of \(path)")
            Output.line(String(format: "  messages        %@", Output.count(result.messages)))
            Output.line(String(format: "  time            %.1f s", result.seconds))
            Output.line(String(format: "  throughput      %@ messages/s, %.1f MB/s", Output.count(Int(result.messagesPerSecond)), result.megabytesPerSecond))
            Output.line(String(format: "  peak RSS        %.0f MB", result.peakRSSMB))
            Output.line(String(format: "  database        %@", Output.bytes(result.databaseBytes)))
            Output.line("  phases (reader and writer threads overlap):")
            Output.line(String(format: "    read/inflate  %.1f s", result.phases.read))
            Output.line(String(format: "    decode        %.1f s", result.phases.decode))
            Output.line(String(format: "    normalise     %.1f s", result.phases.normalise))
            Output.line(String(format: "    write         %.1f s", result.phases.write))
            Output.line(String(format: "    index (FTS)   %.1f s", result.phases.index))
            Output.line(String(format: "    checkpoint    %.1f s (waiting for the checkpoint thread)", result.phases.checkpoint))
        }
    }

    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Run a search workload against the archive: p50/p95/p99/max latency, hits and the slowest queries.",
            discussion: """
                The built-in workload draws 200 queries from the archive's own vocabulary with a fixed seed:
                rare, medium and very common words, phrases, prefixes, words with filters, filters alone. \
                --queries FILE takes one query per line instead.

                Examples:
                  slackindex bench search
                  slackindex bench search --queries my-queries.txt --runs 5 --json
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("One query per line (default: the built-in workload).", valueName: "file"))
        var queries: String?

        @Option(help: "Timed passes over the workload.")
        var runs = 3

        @Option(help: "Untimed passes first.")
        var warmup = 1

        @Flag(help: "Print one JSON object.")
        var json = false

        @Option(help: ArgumentHelp("Also write the latency distribution as an SVG chart.", valueName: "file.svg"))
        var plot: String?

        @Flag(help: "Match words exactly, as `search --exact` (default: with English variants, as `search`).")
        var exact = false

        func run() throws {
            let archive = try global.openArchive(.readOnly)
            var bench = SearchBench(archive: archive)
            bench.runs = max(1, runs)
            bench.warmup = max(0, warmup)
            let workload: [SearchBench.Query]
            if let queries {
                let text: String
                do { text = try String(contentsOfFile: queries, encoding: .utf8) } catch {
                    throw ValidationError("Could not read --queries file '\(queries)': \(error.localizedDescription)")
                }
                workload = text.split(whereSeparator: \.isNewline).map { SearchBench.Query(kind: "user", text: String($0)) }
            } else {
                workload = try bench.builtInWorkload()
            }
            var options = SearchOptions()
            options.wordVariants = !exact
            let result = try bench.run(workload, options: options)
            if let plot { try BenchCommand.write(result.plot().render(), to: plot) }
            if json { return Output.json(SearchJSON(result: result)) }
            Output.line("search: \(result.queries) queries × \(result.runs) runs, \(Output.count(result.hits)) hits per pass")
            let rows = (result.byKind.sorted(by: { $0.key < $1.key }) + [("all", result.overall)]).map { kind, s in
                ["  " + kind, String(s.count / max(1, result.runs))]
                    + [s.p50, s.p95, s.p99, s.max].map { String(format: "%.2f", $0) }
            }
            Output.table(header: ["  kind", "n", "p50 ms", "p95 ms", "p99 ms", "max ms"], rows: rows, rightAligned: [1, 2, 3, 4, 5])
            guard !result.slowest.isEmpty else { return }
            Output.line("slowest (median of the runs):")
            let slow = result.slowest.prefix(5).map { ["  " + String(format: "%.2f ms", $0.medianMs), $0.kind, $0.text] }
            Output.table(header: ["  median", "kind", "query"], rows: slow, rightAligned: [0])
        }
    }

    struct TimelineBenchCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "timeline",
            abstract: "Page through the busiest conversation at several depths: keyset vs OFFSET, cache hits, scrolling.",
            discussion: """
                Examples:
                  slackindex bench timeline --json
                """)

        @OptionGroup var global: GlobalOptions

        @Option(help: "Timed reads per depth.")
        var runs = 200

        @Option(help: "How many of the busiest conversations to page through (the scroll workload uses the first).")
        var conversations = 1

        @Flag(help: "Print one JSON object.")
        var json = false

        @Option(help: ArgumentHelp("Also write latency by depth (keyset vs OFFSET) as an SVG chart.", valueName: "file.svg"))
        var plot: String?

        func run() throws {
            var bench = TimelineBench(archive: try global.openArchive(.readOnly))
            bench.runs = max(3, runs)
            bench.conversations = max(1, conversations)
            let result = try bench.run()
            if let plot { try BenchCommand.write(result.plot().render(), to: plot) }
            if json { return Output.json(result) }
            Output.line("timeline: pages of \(result.pageSize), p50 of \(runs) reads")
            let rows = result.depths.map { d in
                ["  " + d.conversation, String(d.depth), String(format: "%.3f", d.keysetMs), String(format: "%.3f", d.offsetMs)]
            }
            Output.table(header: ["  conversation", "depth", "keyset ms", "OFFSET ms"], rows: rows, rightAligned: [1, 2, 3])
            Output.line(String(format: "  cache hit           %.4f ms", result.cacheHitMs))
            Output.line(
                String(
                    format: "  scroll (%d steps)   hit rate %.0f%%, p50 %.3f ms, p99 %.3f ms", result.scrollSteps,
                    result.hitRate * 100, result.scroll.p50, result.scroll.p99))
        }
    }
}

extension BenchCommand {
    /// Writes a chart, saying where on stderr.
    static func write(_ svg: String, to path: String) throws {
        do {
            try Data(svg.utf8).write(to: URL(fileURLWithPath: path))
            Output.error("wrote \(path)")
        } catch {
            throw ValidationError("Could not write the chart to '\(path)': \(error.localizedDescription)")
        }
    }
}

/// Search bench JSON: the issue's keys at the top level, the rest beside them.
struct SearchJSON: Encodable {
    var result: SearchBench.Result

    private enum Keys: String, CodingKey {
        case queries, runs, hits
        case p50 = "p50_ms", p95 = "p95_ms", p99 = "p99_ms", max = "max_ms"
        case byKind = "by_kind"
        case slowest
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(result.queries, forKey: .queries)
        try c.encode(result.runs, forKey: .runs)
        try c.encode(result.hits, forKey: .hits)
        try c.encode(result.overall.p50, forKey: .p50)
        try c.encode(result.overall.p95, forKey: .p95)
        try c.encode(result.overall.p99, forKey: .p99)
        try c.encode(result.overall.max, forKey: .max)
        try c.encode(result.byKind, forKey: .byKind)
        try c.encode(result.slowest, forKey: .slowest)
    }
}
