import Foundation
import SlackIndex
import Testing
@testable import SlackIndexTestSupport

/// `slackindex mcp` driven through the official Python MCP client (`pip install mcp`) over stdio:
/// `scripts/mcp_client.py` runs the steps and prints what each answered.
///
/// Runs when `python3 -c 'import mcp'` works; with `SLACKINDEX_REQUIRE_MCP=1` (CI) it always runs and fails when the
/// package is missing.
@Suite struct MCPClientTests {
    static let required = ProcessInfo.processInfo.environment["SLACKINDEX_REQUIRE_MCP"] == "1"
    static let available: Bool = (try? SlackSDKClientTests.python(["-c", "import mcp"]).status) == 0

    /// Runs `steps` in one session of `slackindex --db DB mcp ARGUMENTS`; one result object per step.
    static func session(db: String, _ arguments: [String], steps: [[String: Any]]) throws -> [[String: Any]] {
        let binary = try #require(CLITests.binary, "build the slackindex executable first").path
        let script = TestSupport.root.appendingPathComponent("scripts/mcp_client.py").path
        let plan = String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self)
        let run = try SlackSDKClientTests.python([script, plan, "--", binary, "--db", db, "mcp"] + arguments)
        try #require(run.status == 0, "\(run.stderr)")
        let results = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        try #require(results.count == steps.count)
        return results
    }

    static func text(_ result: [String: Any]) -> String { result["text"] as? String ?? "" }
    static func failed(_ result: [String: Any]) -> Bool { result["error"] as? Bool == true }

    @Test(.enabled(if: required || available, "needs python3 with the mcp package (pip install mcp)"))
    func pythonClientSearchesReadsPagesAndSeesNoHiddenDM() throws {
        let check = try SlackSDKClientTests.python(["-c", "import mcp"])
        try #require(check.status == 0, "SLACKINDEX_REQUIRE_MCP=1 but the mcp package is missing: \(check.stderr)")
        let db = try ServeCLITests.importSample()
        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let outsider = try #require(oracle.userIDs.first { $0.value == APIFixture.outsider }?.key)
        let dm = APIFixture.dm
        let dmProbes: [[String: Any]] = [
            ["tool": "search", "arguments": ["query": "\"exception handlers are specified\""]],
            ["tool": "history", "arguments": ["conversation": dm]],
            ["tool": "thread", "arguments": ["message": "\(dm)/1712076001.025423"]],
            ["read": "slackindex://conversation/\(dm)"],
        ]
        let steps: [[String: Any]] =
            [
                ["list": "tools"],
                ["tool": "search", "arguments": ["query": "\"format strings contain replacement\""]],
                ["tool": "thread", "arguments": ["message": "#general/1716187032.093639", "format": "full"]],
                ["tool": "messages_around", "arguments": ["message": "#general/1716185438.024538", "limit": 5]],
                [
                    "pages": "history",
                    "arguments": ["conversation": "#general", "after": "2024-05-01", "before": "2024-06-01", "limit": 7],
                ],
                ["list": "resources"], ["list": "templates"], ["list": "prompts"],
                ["prompt": "summarise_conversation", "arguments": ["conversation": "general", "after": "2024-05-01"]],
            ] + dmProbes
        let answers = try Self.session(db: db, ["--as", "@" + outsider], steps: steps)

        let tools = try #require(answers[0]["items"] as? [[String: Any]])
        #expect(
            tools.compactMap { $0["name"] as? String }
                == ["search", "messages_around", "history", "thread", "conversations", "users", "archive_facts"])
        for tool in tools {
            #expect((tool["description"] as? String)?.count ?? 0 > 80, "\(tool["name"] ?? "")")
            #expect((tool["schema"] as? [String: Any])?["type"] as? String == "object")
        }

        let search = Self.text(answers[1])
        #expect(MCPToolsTests.handles(search).first == "#general/1716187032.093639", "\(search)")
        #expect(search.contains("permalink: https://") && search.contains("**"))

        let thread = try APIFixture.exportMessages(folder: "general")
            .filter { $0["thread_ts"] as? String == "1716185438.024538" }.compactMap { $0["ts"] as? String }
            .sorted { SampleOracle.micros($0) < SampleOracle.micros($1) }
        #expect(MCPToolsTests.ts(MCPToolsTests.handles(Self.text(answers[2]))) == thread)

        let history = try APIFixture.exportHistory(folder: "general").reversed().map { $0 }
        let index = try #require(history.firstIndex(of: "1716185438.024538"))
        #expect(MCPToolsTests.ts(MCPToolsTests.handles(Self.text(answers[3]))) == Array(history[(index - 2)...(index + 2)]))

        let pages = try #require(answers[4]["texts"] as? [String])
        let users = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: TestSupport.sampleFolder + "/users.json"))) as? [[String: Any]]
        let tz = users?.first { $0["id"] as? String == APIFixture.outsider }?["tz"] as? String
        let zone = try #require(TimeZone(identifier: tz ?? "UTC"))
        let lower = try #require(Day(year: 2024, month: 5, day: 1)).startEpochMicros(in: zone)
        let upper = try #require(Day(year: 2024, month: 6, day: 1)).startEpochMicros(in: zone)
        let expected = history.filter { (lower..<upper).contains(SampleOracle.micros($0)) }
        #expect(pages.count == (expected.count + 6) / 7, "pages of 7")
        #expect(pages.flatMap { MCPToolsTests.ts(MCPToolsTests.handles($0)) } == expected)

        let resources = try #require(answers[5]["items"] as? [[String: Any]]).compactMap { $0["uri"] as? String }
        #expect(resources.contains { $0.hasPrefix("slackindex://conversation/") } && !resources.contains { $0.contains(dm) })
        #expect((answers[6]["items"] as? [[String: Any]])?.count == 2)
        #expect((answers[7]["items"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
            == ["summarise_conversation", "find_decision"])
        #expect(Self.text(answers[8]).contains("#general"))

        // The outsider: nothing from the DM by search, by id, by thread ts, as a resource.
        let hidden = Array(answers.suffix(dmProbes.count))
        #expect(!Self.failed(hidden[0]) && !Self.text(hidden[0]).contains(dm), "\(Self.text(hidden[0]))")
        for probe in hidden.dropFirst() {
            #expect(Self.failed(probe))
            #expect(Self.text(probe).contains("No conversation called '\(dm)' that you can see"), "\(Self.text(probe))")
        }
        // A member of the DM gets each of them: the probes would have found it.
        let member = try Self.session(db: db, ["--as", APIFixture.dmMembers[0]], steps: dmProbes)
        #expect(MCPToolsTests.handles(Self.text(member[0])).contains("\(dm)/1710224760.087935"))
        for answer in member { #expect(!Self.failed(answer) && Self.text(answer).contains("\(dm)/"), "\(answer)") }
    }
}
