import Foundation
import Testing

@testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// `sync --files`: a sync then fetches what `slackindex files` would, with the same token.
@Suite struct SyncFilesTests {
    @Test func aSyncWithFilesFetchesTheSyncedFiles() async throws {
        // The source: an archive holding FileFetchTests' thirteen files, served as a Slack-compatible API.
        let source = try FileFetchTests.archive()
        let token = try source.createToken(userID: "U1").token
        let server = try ServeCLITests.serve(db: source.path)
        defer { _ = server.stop() }
        let host = FileHostStandIn(FileFetchTests.standIn, token: token)
        let files = try await host.start()

        let db = TestSupport.temporaryDirectory().appendingPathComponent("synced.sqlite").path
        let run = try await CLITests.run(
            ["--db", db, "sync", "--api", server.url, "--files", "--file-host", files, "--json", "--quiet"],
            environment: ["SLACK_TOKEN": token, "XDG_CONFIG_HOME": TestSupport.temporaryDirectory().path])
        await host.stop()
        // Some files are gone or refused at the stand-in, as in FileFetchTests: exit 2.
        #expect(run.status == 2, "\(run.stderr)")
        let object = try CLITests.json(Substring(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(object["messagesAdded"] as? Int == 13, "\(object)")
        let fetched = try #require(object["files"] as? [String: Any], "\(object)")
        #expect(fetched["files"] as? Int == 13)
        // No --max-size: the two large ones are fetched too (the default cap is 100 MB).
        #expect(
            fetched["downloaded"] as? Int == 6 && fetched["gone"] as? Int == 3 && fetched["refused"] as? Int == 2
                && fetched["failed"] as? Int == 1, "\(fetched)")
        // The served archive has no emoji.list: said, and counted as not fetched.
        #expect(fetched["emoji_list_error"] as? String == "emoji.list answered 'unknown_method'.")
        let synced = try Archive(path: db)
        #expect(try synced.store.fileBlob(id: "FPNG")?.sha256 == FileFetchTests.sha256(FileFetchTests.png))

        let plain = try await CLITests.run(["--db", db, "sync", "--file-host", files])
        #expect(plain.status == 64 && plain.stderr.contains("--file-host goes with --files"), "\(plain.stderr)")
    }
}
