import Foundation
import Testing
@testable import SlackIndexTestSupport

/// Runs the built `slackindex` binary the way a user does and checks stdout, stderr and the exit status.
@Suite struct CLITests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let binary: URL? = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
            TestSupport.root.appendingPathComponent(".build/debug"),
        ]
        return candidates.map { $0.appendingPathComponent("slackindex") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        try run(executable: try #require(binary, "build the slackindex executable first"), arguments, environment: environment)
    }

    /// `run(_:environment:)` from async code: the binary waited for on a thread of its own. Stand-ins in this
    /// process (file hosts, Slack APIs) answer on the cooperative threads, and a blocking wait there (two cores,
    /// two threads) can leave none to answer: a whole `swift test` hung so, two tests each waiting on a child that
    /// waited on a stand-in. Being the async overload, it is the one async tests get.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try run(arguments, environment: environment) as Run })
            }
        }
    }

    /// Starts `executable` with the test's environment plus `environment`, stdout and stderr piped.
    static func launch(
        executable: URL, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (Process, out: Pipe, err: Pipe) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["COLUMNS"] = nil  // output is wrapped only when a test asks for a width
        env.merge(environment) { _, new in new }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    /// Runs `executable` to the end (blocking).
    static func run(executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let (process, out, err) = try launch(executable: executable, arguments, environment: environment)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    static func json(_ line: Substring) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func importSearchHistoryStatsOnSampleData() throws {
        let db = TestSupport.temporaryDirectory().appendingPathComponent("cli.sqlite").path
        let imported = try Self.run(["--db", db, "import", TestSupport.sampleFolder, "--quiet"])
        #expect(imported.status == 0)
        #expect(imported.stdout.contains("messages:      3,000 added, 0 updated, 0 unchanged, 0 skipped"))
        #expect(imported.stderr.isEmpty)

        let again = try Self.run(["import", TestSupport.sampleZip, "--db", db, "--json"])
        #expect(again.status == 0)
        let summary = try Self.json(Substring(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(summary["messages_unchanged"] as? Int == 3_000)
        #expect(summary["messages_added"] as? Int == 0)

        let search = try Self.run(["--db", db, "search", "\"data descriptor\"", "--json", "--limit", "5"])
        #expect(search.status == 0)
        let lines = search.stdout.split(separator: "\n")
        #expect(!lines.isEmpty && lines.count <= 5)
        for line in lines {
            let hit = try Self.json(line)
            for key in ["conversation_id", "conversation", "ts", "user_id", "user", "text", "snippet", "thread_ts"] {
                #expect(hit.keys.contains(key), "missing \(key)")
            }
            #expect((hit["snippet"] as? String)?.lowercased().contains("**data descriptor**") == true)
        }

        let text = try Self.run(["--db", db, "search", "data", "descriptor", "--limit", "1"])
        #expect(text.status == 0)
        #expect(text.stdout.split(separator: "\n").count == 2)
        // Piped text has no marks (no ** around matches); --highlight asks for them, --color always for colour.
        #expect(!text.stdout.contains("**data**") && text.stdout.contains(" data "))
        let marked = try Self.run(["--db", db, "search", "data", "descriptor", "--limit", "1", "--highlight", "[[", "--color", "never"])
        #expect(marked.stdout.contains("[[data[["))
        let colored = try Self.run(["--db", db, "--color", "always", "search", "data", "descriptor", "--limit", "1"])
        #expect(colored.stdout.contains("\u{1B}[1;33mdata\u{1B}[0m"))
        let noColor = try Self.run(["--db", db, "search", "data", "--limit", "1", "--color", "never"])
        #expect(!noColor.stdout.contains("\u{1B}"))
        let csv = try Self.run(["--db", db, "search", "\"data descriptor\"", "--format", "csv", "--tz", "Europe/Paris", "--limit", "1"])
        let csvLines = csv.stdout.split(separator: "\n")
        #expect(csvLines.first == "conversation_id,conversation,ts,date,user_id,user,text,thread_ts,permalink")
        #expect(csvLines.count == 2 && csvLines[1].contains(",2024-") && csvLines[1].contains("+02:00,"), "\(csv.stdout)")
        let version = try Self.run(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("slackindex "))

        let history = try Self.run(["--db", db, "history", "#general", "--limit", "3", "--json"])
        #expect(history.status == 0)
        let allLines = history.stdout.split(separator: "\n")
        let last = try #require(allLines.last)
        let pageLines = allLines.dropLast()
        let cursors = try #require(try Self.json(last)["cursors"] as? [String: Any])
        #expect(cursors["previous"] is String)
        #expect(cursors["next"] is NSNull)
        let ts = try pageLines.map { try Self.json($0)["ts"] as? String ?? "" }
        #expect(ts.count == 3)
        #expect(ts == ts.sorted())
        let older = try Self.run(["--db", db, "history", "--cursor", cursors["previous"] as? String ?? "", "--json"])
        #expect(older.status == 0)
        #expect(older.stdout.split(separator: "\n").count == 4, "the cursor keeps the --limit 3 it was made with")

        let stats = try Self.run(["--db", db, "stats", "--json"])
        let counts = try Self.json(Substring(stats.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(counts["messages"] as? Int == 3_000)
        #expect(counts["conversations"] as? Int == 22)
        #expect(counts["users"] as? Int == 45)

        let viaEnvironment = try Self.run(["stats", "general", "--json"], environment: ["SLACKINDEX_DB": db])
        #expect(viaEnvironment.status == 0)
        #expect(viaEnvironment.stdout.contains("\"conversation\":\"#general\""))
    }

    @Test func exitStatusesTellWhatHappened() throws {
        let dir = TestSupport.temporaryDirectory()
        let db = dir.appendingPathComponent("exit.sqlite").path
        let notExport = dir.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: notExport)
        let nothing = try Self.run(["--db", db, "import", notExport.path, "--quiet"])
        #expect(nothing.status == 1)
        #expect(nothing.stderr.contains("is not a Slack export"))

        // The folder beside the README (`import sample-data/`): its summary.json made it pass for sync pages, and
        // the export's day files went in as pages of no conversation (483 added, 3,219 skipped, exit 2). Now it is
        // refused, the sources inside are named, and no archive is created.
        let folder = try Self.run(["--db", db, "import", TestSupport.sampleData.path, "--quiet"])
        #expect(folder.status == 1)
        #expect(folder.stderr.contains("It holds ") && folder.stderr.contains("sample-data/export.zip"), "\(folder.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db))

        let partial = try TestSupport.minimalExport(days: [
            "2023-11-14": TestSupport.goodDayFile, "2023-11-15": "[{",
        ])
        let some = try Self.run(["--db", db, "import", partial.path, "--quiet"])
        #expect(some.status == 2)
        #expect(some.stderr.contains("2023-11-15.json"))

        let unknown = try Self.run(["--db", db, "history", "#nope"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("No conversation called '#nope'"))

        let badLimit = try Self.run(["--db", db, "search", "x", "--limit", "0"])
        #expect(badLimit.status == 64)
    }

    @Test func benchReportsTheDocumentedKeys() throws {
        let dir = TestSupport.temporaryDirectory()
        let db = dir.appendingPathComponent("bench.sqlite").path
        _ = try Self.run(["--db", db, "import", TestSupport.sampleZip, "--quiet"])
        let imported = try Self.run(["bench", "import", TestSupport.sampleZip, "--json"])
        let importJSON = try Self.json(Substring(imported.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect((importJSON["messages_per_second"] as? Double ?? 0) > 0)
        #expect((importJSON["peak_rss_mb"] as? Double ?? 0) > 0)
        #expect(importJSON["messages"] as? Int == 3_000)
        let search = try Self.run(["--db", db, "bench", "search", "--runs", "1", "--warmup", "0", "--json"])
        let searchJSON = try Self.json(Substring(search.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        for key in ["queries", "p50_ms", "p95_ms", "p99_ms", "max_ms"] { #expect(searchJSON[key] != nil, "\(key)") }
        #expect((searchJSON["queries"] as? Int ?? 0) >= 50)
        let svg = dir.appendingPathComponent("timeline.svg").path
        let timeline = try Self.run(["bench", "timeline", "--db", db, "--runs", "3", "--json", "--plot", svg])
        let timelineJSON = try Self.json(Substring(timeline.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let depths = try #require(timelineJSON["depths"] as? [[String: Any]])
        #expect(!depths.isEmpty)
        for depth in depths {
            for key in ["depth", "keyset_ms", "offset_ms"] { #expect(depth[key] != nil, "\(key)") }
        }
        #expect(timelineJSON["cache_hit_ms"] != nil && timelineJSON["hit_rate"] != nil)
        let chart = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(chart.hasPrefix("<svg") && chart.contains("OFFSET") && chart.contains("latency per page (ms"))
    }

    @Test(arguments: ["import", "search", "history", "thread", "stats", "bench", "upgrade"])
    func everyCommandHasHelpWithAnExample(command: String) throws {
        let help = try Self.run([command, "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Examples:"))
        #expect(help.stdout.contains("slackindex \(command)"))
    }
}

extension CLITests {
    /// The README's first command builds `slackindex` alone (issue 48): `mcp` without `slackindex-mcp` beside it says
    /// how to build or install it, exit 1.
    @Test func mcpWithoutItsServerBinarySaysHowToBuildIt() throws {
        let folder = TestSupport.temporaryDirectory()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let alone = folder.appendingPathComponent("slackindex")
        try FileManager.default.copyItem(at: try #require(Self.binary), to: alone)
        let db = folder.appendingPathComponent("a.sqlite").path
        let imported = try Self.run(["--db", db, "import", TestSupport.sampleZip, "--quiet"])
        try #require(imported.status == 0, "\(imported.stderr)")
        let run = try Self.run(executable: alone, ["--db", db, "mcp", "--as", "U0T28J57VPZ"])
        #expect(run.status == 1)
        #expect(
            run.stderr.contains(
                "slackindex-mcp is missing: build it beside slackindex (`swift build -c release --product "
                    + "slackindex-mcp`), or install both with `scripts/install.sh`."), "\(run.stderr)")
    }
}
