import Foundation
import Synchronization
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexTestSupport

/// Ctrl-C during `import` and `sync`: what was read is saved, the user is told how much, the exit status is 130,
/// and running the same command again finishes the job with exact counts.
@Suite struct InterruptTests {
    /// An export with `days` day files of `perDay` messages in #general; returns it and its message count.
    static func export(days: Int, perDay: Int) throws -> (URL, Int) {
        var files: [String: String] = [:]
        let start = 1_700_006_400  // 2023-11-15 00:00 UTC
        let format = DateFormatter()
        format.dateFormat = "yyyy-MM-dd"
        format.timeZone = TimeZone(identifier: "UTC")
        for day in 0..<days {
            let midnight = start + day * 86_400
            let messages = (0..<perDay).map { i in
                #"{"type":"message","user":"U1","text":"note \#(day) \#(i) about the deploy","ts":"\#(midnight + i * 10).000100"}"#
            }
            files[format.string(from: Date(timeIntervalSince1970: Double(midnight)))] = "[" + messages.joined(separator: ",") + "]"
        }
        return (try TestSupport.minimalExport(days: files), days * perDay)
    }

    @Test func aStoppedImportKeepsWhatItWroteAndTheSameImportAddsTheRest() throws {
        let (export, total) = try Self.export(days: 40, perDay: 250)
        let archive = try TestSupport.makeArchive()
        let stop = StopSignal()
        // The progress handler runs after each batch is written: the stop is seen within the first ones.
        let first = Importer(archive: archive, batchSize: 1_000, commitMessages: 3_000, stop: stop)
            .importPaths([export.path]) { _ in stop.request() }
        let saved = first.messagesAdded
        #expect(first.interrupted)
        #expect(saved >= 1_000 && saved <= total / 2, "stopped within the first batches")
        #expect(try archive.stats().messages == saved)

        let second = Importer(archive: archive).importPaths([export.path])
        #expect(!second.interrupted)
        #expect(second.messagesAdded == total - saved)
        #expect(second.messagesUnchanged == saved)
        #expect(try archive.stats().messages == total)
        #expect(try SearchEngine(archive: archive).count("deploy").0 == total)
        try IndexOracle.expectExact(archive)
    }

    /// A date larger than a batch is written in parts (`ImportBatch.split`); a stop seen after its first part
    /// still commits the whole date, as the same import run again would find it.
    @Test func aStopInTheMiddleOfADateKeepsTheDateWhole() throws {
        let (export, total) = try Self.export(days: 6, perDay: 250)
        let archive = try TestSupport.makeArchive()
        let stop = StopSignal()
        // The progress handler runs after each part is written: the stop is seen after the first of three.
        let parts = Mutex<[Int]>([])
        let first = Importer(archive: archive, batchSize: 100, commitMessages: 100, stop: stop)
            .importPaths([export.path]) { progress in
                parts.withLock { $0.append(progress.messagesDone) }
                stop.request()
            }
        #expect(first.interrupted)
        #expect(first.messagesAdded == 250, "the first date, all three parts of it")
        // Parts of at most 100 messages: 83, 83, 84.
        #expect(parts.withLock { $0 } == [83, 166, 250])
        #expect(try archive.stats().messages == 250)
        let second = Importer(archive: archive).importPaths([export.path])
        #expect(second.messagesAdded == total - 250 && second.messagesUnchanged == 250)
        try IndexOracle.expectExact(archive)
    }

    @Test func aStopBetweenPathsLeavesTheRestUnread() throws {
        let (export, _) = try Self.export(days: 2, perDay: 10)
        let archive = try TestSupport.makeArchive()
        let stop = StopSignal()
        stop.request()
        let summary = Importer(archive: archive, stop: stop).importPaths([export.path, export.path])
        #expect(summary.interrupted)
        #expect(summary.sources.isEmpty)
        #expect(summary.messagesRead == 0)
    }

    /// Synchronous on purpose: an async test's `Task.sleep` can wait behind other tests that block the
    /// cooperative pool, and the import then finishes before the signal is sent.
    @Test func ctrlCDuringImportSavesWhatWasReadAndExits130() throws {
        let binary = try #require(CLITests.binary, "build the slackindex executable first")
        let (export, total) = try Self.export(days: 160, perDay: 250)
        let db = TestSupport.temporaryDirectory().appendingPathComponent("ctrl-c.sqlite").path
        let (process, out, err) = try CLITests.launch(
            executable: binary, ["--db", db, "import", export.path], environment: ["SLACKINDEX_PROGRESS_SECONDS": "0.3"])
        // Ctrl-C once the import reports messages read (a progress line every 0.3 s), so that it comes while
        // messages are being read and written however loaded the machine is. It waited 0.1 s after the WAL file
        // appeared before: on a loaded machine nothing had been read yet, or the signal came before the handler was
        // in place. (Waiting for committed messages does not work: an export commits every 200,000.)
        var early = Data()
        func reported() -> Bool {
            let lines = String(decoding: early, as: UTF8.self).split(separator: "\n")
            return lines.contains { $0.hasPrefix("import: ") && !$0.contains(" 0 messages") }
        }
        while !reported() {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // the import ended first: the expectations below fail and show its output
            early += chunk
        }
        kill(process.processIdentifier, SIGINT)
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: early + err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("Stopping after the messages being written"))
        let saved = try #require(Self.count(after: "Interrupted: ", in: stderr), "\(stderr)")
        #expect(saved > 0 && saved < total)
        #expect(stderr.contains("the same import run again adds the rest"))
        #expect(stdout.contains("messages:      \(Self.grouped(saved)) added"))
        let stats = try CLITests.run(["--db", db, "stats", "--json"])
        #expect(try CLITests.json(stats.stdout.split(separator: "\n")[0])["messages"] as? Int == saved)

        let again = try CLITests.run(["--db", db, "import", export.path, "--json", "--quiet"])
        #expect(again.status == 0, "\(again.stderr)")
        let summary = try CLITests.json(again.stdout.split(separator: "\n")[0])
        #expect(summary["messages_added"] as? Int == total - saved)
        #expect(summary["messages_unchanged"] as? Int == saved)
        #expect(summary["interrupted"] as? Bool == false)
        let after = try CLITests.run(["--db", db, "stats", "--json"])
        #expect(try CLITests.json(after.stdout.split(separator: "\n")[0])["messages"] as? Int == total)
    }

    /// A Slack-compatible API whose history answers one page, then hangs on the next: Ctrl-C arrives while the
    /// sync waits for it.
    static let hangingAPI = #"""
        import http.server, json, sys, time, urllib.parse
        marker = sys.argv[1]
        answers = {
            "auth.test": {"ok": True, "user_id": "U1", "user": "ann", "team_id": "T1", "team": "t", "url": "https://t.slack.com/"},
            "users.list": {"ok": True, "members": [{"id": "U1", "name": "ann", "team_id": "T1"}], "response_metadata": {"next_cursor": ""}},
            "conversations.list": {"ok": True, "channels": [{"id": "C1", "name": "general", "is_channel": True, "created": 1433558319}], "response_metadata": {"next_cursor": ""}},
        }
        first_page = {"ok": True, "has_more": True, "response_metadata": {"next_cursor": "page2"}, "messages": [
            {"type": "message", "user": "U1", "text": "third", "ts": "1700000300.000100"},
            {"type": "message", "user": "U1", "text": "second", "ts": "1700000200.000100"},
            {"type": "message", "user": "U1", "text": "first", "ts": "1700000100.000100"}]}
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                url = urllib.parse.urlparse(self.path)
                method = url.path.rsplit("/", 1)[-1]
                query = urllib.parse.parse_qs(url.query)
                if method == "conversations.history":
                    if "cursor" in query:
                        open(marker, "w").write("waiting")
                        time.sleep(120)
                    body = first_page
                else:
                    body = answers.get(method, {"ok": False, "error": "unknown_method"})
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    @Test func ctrlCDuringSyncSaysWhatWasSavedAndExits130() async throws {
        let binary = try #require(CLITests.binary, "build the slackindex executable first")
        let dir = TestSupport.temporaryDirectory()
        let marker = dir.appendingPathComponent("waiting").path
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", "-c", Self.hangingAPI, marker]
        let serverOut = Pipe()
        server.standardOutput = serverOut
        try server.run()
        // SIGKILL: the server inherits this process's signal dispositions (SIGTERM may be ignored here) and its
        // stderr, which swift test waits on.
        defer { kill(server.processIdentifier, SIGKILL) }
        let portLine = String(decoding: serverOut.fileHandleForReading.availableData, as: UTF8.self)
        let port = try #require(Int(portLine.trimmingCharacters(in: .whitespacesAndNewlines)), "\(portLine)")

        let db = dir.appendingPathComponent("sync.sqlite").path
        let (process, _, err) = try CLITests.launch(
            executable: binary, ["--db", db, "sync", "--api", "http://127.0.0.1:\(port)/api/"],
            environment: ["SLACK_TOKEN": "xoxp-test", "HOME": dir.path])
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: marker), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        guard FileManager.default.fileExists(atPath: marker) else {
            process.terminate()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            Issue.record("the sync never asked for the second page: \(stderr)")
            return
        }
        kill(process.processIdentifier, SIGINT)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("Interrupted: 3 messages saved; `slackindex sync` again continues"), "\(stderr)")
        let stats = try await CLITests.run(["--db", db, "stats", "--json"])
        #expect(try CLITests.json(stats.stdout.split(separator: "\n")[0])["messages"] as? Int == 3)
    }

    /// The number after `prefix` in `text` (`Interrupted: 2,000 messages` gives 2000).
    static func count(after prefix: String, in text: String) -> Int? {
        guard let range = text.range(of: prefix) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber || $0 == "," }.filter(\.isNumber))
    }

    static func grouped(_ n: Int) -> String { Importer.grouped(n) }
}
