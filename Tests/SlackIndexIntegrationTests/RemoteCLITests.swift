import Foundation
import SlackIndexServer
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport
@testable import SlackIndexTests

#if canImport(Glibc)
    import Glibc
#endif

/// `slackindex sync` and `slackindex search --remote` as a user runs them, against `serve` in this process.
@Suite(.serialized) struct RemoteCLITests {
    /// Starts the binary; waits without blocking a thread the in-process server needs.
    static func start(_ arguments: [String], token: String) throws -> (Process, Pipe, Pipe) {
        let home = TestSupport.temporaryDirectory().path
        let environment = [
            "HOME": home, "XDG_CONFIG_HOME": home + "/config", "SLACK_TOKEN": token, "SLACKINDEX_REMOTE_TOKEN": token,
        ]
        let (process, out, err) = try CLITests.launch(
            executable: try #require(CLITests.binary, "build the slackindex executable first"), arguments,
            environment: environment)
        return (process, out, err)
    }

    static func finish(_ process: Process, _ out: Pipe, _ err: Pipe) async throws -> CLITests.Run {
        // Drain the pipes on Dispatch threads (not the cooperative pool, which the in-process server needs), so
        // a chatty process never blocks on a full pipe.
        async let stdout = Self.readToEnd(out)
        async let stderr = Self.readToEnd(err)
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        return CLITests.Run(
            status: process.terminationStatus, stdout: String(decoding: await stdout, as: UTF8.self),
            stderr: String(decoding: await stderr, as: UTF8.self))
    }

    static func readToEnd(_ pipe: Pipe) async -> Data {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: pipe.fileHandleForReading.readDataToEndOfFile())
            }
        }
    }

    @Test func syncKilledWithSigkillResumesToTheSameArchive() async throws {
        let (source, token) = try LiveSyncTests.source()
        let faults = FaultInjector(delay: .milliseconds(15))
        let server = try await LiveSyncTests.start(source, middleware: [faults])
        let db = TestSupport.temporaryDirectory().appendingPathComponent("b.sqlite").path
        let arguments = ["--db", db, "sync", "--api", server.baseURL, "--page-size", "20"]

        let (victim, out, err) = try Self.start(arguments, token: token)
        while faults.total < 40, victim.isRunning { try await Task.sleep(for: .milliseconds(5)) }
        #expect(victim.isRunning, "the sync ended before it could be killed")
        kill(victim.processIdentifier, SIGKILL)
        let killed = try await Self.finish(victim, out, err)
        #expect(killed.status == SIGKILL)
        #expect(!killed.stderr.contains(token) && !killed.stdout.contains(token))

        let requestsBefore = faults.total
        let (again, out2, err2) = try Self.start(arguments + ["--json"], token: token)
        let resumed = try await Self.finish(again, out2, err2)
        await server.stop()
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let summary = try CLITests.json(Substring(resumed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(summary["requests"] as? Int == faults.total - requestsBefore)
        #expect(!resumed.stderr.contains(token))

        let target = try Archive(path: db)
        try LiveSyncTests.expectSameMessages(target, source)
        try SyncPagesTests.check(target, deletedMayBeAbsent: true)
    }

    @Test func syncWithoutATokenSaysHowToGiveOne() async throws {
        let db = TestSupport.temporaryDirectory().appendingPathComponent("b.sqlite").path
        let (process, out, err) = try Self.start(["--db", db, "sync", "--api", "http://127.0.0.1:9/api/"], token: "")
        let run = try await Self.finish(process, out, err)
        #expect(run.status == 1)
        #expect(run.stderr.contains("No Slack token: set SLACK_TOKEN"))
    }

    @Test func searchMergesTheRemoteAndMarksPartialWhenItIsSlow() async throws {
        let (a, token, b) = try TwoArchiveSearchTests.archives()
        let slow = FaultInjector(delay: .seconds(5))
        let fastServer = try await LiveSyncTests.start(a)
        let slowServer = try await LiveSyncTests.start(a, middleware: [slow])
        let db = b.path

        let (p1, o1, e1) = try Self.start(
            ["--db", db, "search", "syntax", "--remote", fastServer.baseURL, "--json", "--limit", "10"], token: token)
        let merged = try await Self.finish(p1, o1, e1)
        #expect(merged.status == 0, "\(merged.stderr)")
        let lines = try merged.stdout.split(separator: "\n").map(CLITests.json)
        #expect(lines.count == 10)
        #expect(lines.allSatisfy { $0["partial"] as? Bool == false })
        let sources = Set(lines.compactMap { $0["source"] as? String })
        #expect(sources == ["local", "remote"])

        let started = ContinuousClock.now
        let (p2, o2, e2) = try Self.start(
            ["--db", db, "search", "syntax", "--remote", slowServer.baseURL, "--json", "--deadline", "0.5"],
            token: token)
        let partial = try await Self.finish(p2, o2, e2)
        let elapsed = ContinuousClock.now - started
        await fastServer.stop()
        await slowServer.stop()
        #expect(partial.status == 0)
        #expect(elapsed < .milliseconds(4_500), "took \(elapsed)")  // a process start plus the 0.5 s deadline, not 5 s
        let partialLines = try partial.stdout.split(separator: "\n").map(CLITests.json)
        #expect(partialLines.count == 2)
        #expect(partialLines.allSatisfy { $0["partial"] as? Bool == true && $0["source"] as? String == "local" })
        #expect(partial.stderr.contains("warning: the remote did not answer within 0.5 s; showing local results."))
    }

    /// `--save-remote` stores what the remote found and shows the merged hits; on an archive it cannot write (a
    /// 0444 file in a 0555 folder, run as an unprivileged user) it shows them all the same, says why in one line
    /// and exits 2 (issue 55: it failed with "attempt to write a readonly database" and showed nothing).
    @Test func saveRemoteStoresTheRemotesHitsAndShowsThemWhenItCannot() async throws {
        let (a, token, b) = try TwoArchiveSearchTests.archives()
        let server = try await LiveSyncTests.start(a)
        let before = try b.stats().messages
        let arguments = [
            "search", "syntax", "--remote", server.baseURL, "--save-remote", "--json", "--limit", "10", "--deadline", "30",
        ]
        let (p1, o1, e1) = try Self.start(["--db", b.path] + arguments, token: token)
        let saved = try await Self.finish(p1, o1, e1)
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stderr.contains("remote messages in the archive"), "\(saved.stderr)")
        #expect(try saved.stdout.split(separator: "\n").map(CLITests.json).count == 10)
        #expect(try b.stats().messages > before)

        // A read-only archive: the same hits, one warning, exit 2.
        let folder = TestSupport.temporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        let copy = folder.appendingPathComponent("read-only.sqlite").path
        let export = try TestSupport.minimalExport(days: [
            "2023-11-14": #"[{"type":"message","user":"U1","text":"more syntax, locally","ts":"1700000100.000100"}]"#
        ])
        #expect(try await CLITests.run(["--db", copy, "import", export.path, "--quiet"]).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path) }
        let binary = try #require(CLITests.binary, "build the slackindex executable first")
        let asUser = getuid() == 0 ? ["--reuid=65534", "--regid=65534", "--clear-groups", binary.path] : []
        let (p2, o2, e2) = try CLITests.launch(
            executable: getuid() == 0 ? URL(fileURLWithPath: "/usr/bin/setpriv") : binary,
            asUser + ["--db", copy] + arguments,
            environment: ["HOME": "/nonexistent", "SLACKINDEX_REMOTE_TOKEN": token])
        let refused = try await Self.finish(p2, o2, e2)
        await server.stop()
        #expect(refused.status == 2, "\(refused.stderr)")
        let lines = try refused.stdout.split(separator: "\n").map(CLITests.json)
        #expect(lines.count == 10)
        #expect(Set(lines.compactMap { $0["source"] as? String }) == ["local", "remote"])
        let warnings = refused.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        #expect(warnings.count == 1 && warnings[0].contains("the remote hits could not be stored"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("SQLite error"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["read-only.sqlite"])
    }

    /// A remote that refuses the connection, or whose name does not resolve, is told at once as what it is, not
    /// after the whole deadline as a remote that "did not answer" (issue 55).
    @Test func aRefusedOrUnknownRemoteIsToldAtOnce() async throws {
        let (_, token, b) = try TwoArchiveSearchTests.archives()
        for url in ["http://127.0.0.1:\(try Self.closedPort())/api/", "https://nonexistent.invalid/api/"] {
            let started = ContinuousClock.now
            let (process, out, err) = try Self.start(
                ["--db", b.path, "search", "syntax", "--remote", url, "--deadline", "8"], token: token)
            let run = try await Self.finish(process, out, err)
            let elapsed = ContinuousClock.now - started
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stderr.contains("warning: the remote \(url) cannot be reached ("), "\(url): \(run.stderr)")
            #expect(elapsed < .seconds(6), "\(url) took \(elapsed): the deadline is 8 s")
        }
    }

    /// A loopback port nothing listens on: bound, read, closed.
    static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        try #require(bound, "no loopback port to borrow")
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
