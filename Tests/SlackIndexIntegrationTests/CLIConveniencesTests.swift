import Foundation
import Testing
@testable import SlackIndexTestSupport

/// Small things a new user tripped over (issue 55): a hit's handle after `--around`, a handle for `token create
/// --user`, "1 slackdump archive", and an interrupted or stopped import that does not say "Imported".
@Suite struct CLIConveniencesTests {
    static func sampleDB() throws -> String {
        let db = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        #expect(try CLITests.run(["--db", db, "import", TestSupport.sampleZip, "--quiet"]).status == 0)
        return db
    }

    @Test func aroundTakesAHitsHandle() throws {
        let db = try Self.sampleDB()
        let byHandle = try CLITests.run(["--db", db, "history", "#dev/1714146569.016512", "--limit", "3"], environment: ["TZ": "UTC"])
        let byAround = try CLITests.run(
            ["--db", db, "history", "--around", "#dev/1714146569.016512", "--limit", "3"], environment: ["TZ": "UTC"])
        #expect(byAround.status == 0, "\(byAround.stderr)")
        #expect(byAround.stdout == byHandle.stdout)
        #expect(byAround.stdout.contains("▶ 2024-04-26 15:49"), "\(byAround.stdout)")
    }

    @Test func tokenCreateTakesAHandle() throws {
        let db = try Self.sampleDB()
        let created = try CLITests.run(["--db", db, "token", "create", "--user", "andrew.jones"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.hasPrefix("xoxp-slackindex-"), "\(created.stdout)")
        let listed = try CLITests.run(["--db", db, "token", "list"])
        #expect(listed.stdout.contains("U0Y0Y4MV2ZG"), "\(listed.stdout)")  // andrew.jones in sample-data
        let unknown = try CLITests.run(["--db", db, "token", "create", "--user", "nobody.at.all"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("No user called 'nobody.at.all'"), "\(unknown.stderr)")
    }

    @Test func oneSourceOfAKindIsNamedInTheSingular() throws {
        let root = TestSupport.temporaryDirectory().appendingPathComponent("slackdump")
        let path = try DumpFixture().slackdumpArchive(in: root).path
        let db = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        let run = try CLITests.run(["--db", db, "import", path, "--quiet"])
        #expect(run.stdout.contains("recognised:    1 slackdump archive\n"), "\(run.stdout)")
    }
}
