import Foundation
import MCP
import Testing

@testable import SlackIndex
@testable import SlackIndexMCP
@testable import SlackIndexTestSupport

/// `slackindex mcp`'s tools called in process on sample-data: access as in `serve`, paging against the export,
/// readable errors, and the `mcp-tools` fuzz target. (`MCPClientTests` drives the real binary through Python's
/// MCP client.)
@Suite struct MCPToolsTests {
    let archive: Archive
    let outsider: ArchiveTools
    let member: ArchiveTools

    init() throws {
        archive = try TestSupport.sampleArchive()
        outsider = ArchiveTools(archive: archive, viewer: .user(APIFixture.outsider))
        member = ArchiveTools(archive: archive, viewer: .user(APIFixture.dmMembers[0]))
    }

    /// The handles (`#general/1716185438.024538`) an answer lists, in order.
    static func handles(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("handle: ") { return String(trimmed.dropFirst("handle: ".count)) }
            return trimmed.range(of: #"[^ ]+/\d{9,11}\.\d{6}"#, options: .regularExpression).map { String(trimmed[$0]) }
        }
    }

    static func ts(_ handles: [String]) -> [String] { handles.map { String($0.split(separator: "/").last ?? "") } }

    /// The error a call throws, as the assistant reads it.
    func failure(_ tools: ArchiveTools, _ name: String, _ arguments: [String: Value]) -> String? {
        do {
            _ = try tools.call(name, arguments: arguments)
            return nil
        } catch {
            #expect(error is ToolError, "\(name) \(arguments): \(error)")
            return String(describing: error)
        }
    }

    @Test func searchPagesThroughEveryVisibleMatchNewestFirst() throws {
        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let user = APIFixture.outsider
        let visible = Set(oracle.conversations.filter { $0.kind == "channel" || $0.members.contains(user) }.map(\.id))
        let expected = oracle.messages.filter { $0.tokenSet.contains("exception") && visible.contains($0.conversationID) }
            .sorted { $0.micros > $1.micros }.map(\.ts)
        try #require(expected.count > 25, "enough matches for two pages")
        var arguments: [String: Value] = ["query": "exception", "sort": "newest", "exact": true, "limit": 10]
        var found: [String] = []
        var first = ""
        for _ in 0..<50 {
            let text = try outsider.call("search", arguments: arguments)
            if first.isEmpty { first = text }
            found += Self.ts(Self.handles(text))
            guard let range = text.range(of: #"cursor "[^"]+""#, options: .regularExpression) else { break }
            arguments["cursor"] = .string(String(text[range].dropFirst(8).dropLast()))
        }
        #expect(found == expected)
        #expect(first.hasPrefix("\(expected.count) messages match 'exception'; hits 1–10:"), "\(first.prefix(80))")
        #expect(first.contains("\(expected.count - 10) more; ask with cursor"))
        // A cursor belongs to its query.
        arguments["query"] = "deploy"
        #expect(failure(outsider, "search", arguments)?.contains("continues another search") == true)
    }

    @Test func nothingFromAHiddenDMByAnyRoute() throws {
        let dm = APIFixture.dm
        let parent = "1712076001.025423"
        // The member reads the DM; the outsider gets "not found" by id, handle, permalink, thread ts and cursor.
        #expect(try member.call("history", arguments: ["conversation": .string(dm)]).contains("\(dm)/"))
        #expect(try member.call("thread", arguments: ["message": .string("\(dm)/\(parent)")]).contains(parent))
        let searchText = try member.call("search", arguments: ["query": "\"exception handlers are specified\""])
        #expect(Self.handles(searchText).contains("\(dm)/1710224760.087935"))

        let hidden = try outsider.call("search", arguments: ["query": "\"exception handlers are specified\""])
        #expect(!hidden.contains(dm), "\(hidden)")
        #expect(try outsider.call("search", arguments: ["query": "in:\(dm)"]).hasPrefix("No messages match"))
        let notFound = "No conversation called '\(dm)' that you can see"
        #expect(failure(outsider, "history", ["conversation": .string(dm)])?.hasPrefix(notFound) == true)
        #expect(failure(outsider, "thread", ["message": .string("\(dm)/\(parent)")])?.hasPrefix(notFound) == true)
        let permalink = "https://example.slack.com/archives/\(dm)/p\(parent.replacingOccurrences(of: ".", with: ""))"
        #expect(failure(outsider, "messages_around", ["message": .string(permalink)])?.hasPrefix(notFound) == true)
        let byTS: [String: Value] = ["conversation": .string(dm), "ts": .string(parent)]
        #expect(try member.call("thread", arguments: byTS).contains("\(dm)/\(parent)"))
        #expect(failure(outsider, "thread", byTS)?.hasPrefix(notFound) == true)
        let memberPage = try member.call("history", arguments: ["conversation": .string(dm), "limit": 2])
        let cursor = try #require(memberPage.range(of: #"cursor "[^"]+""#, options: .regularExpression))
        let stolen = String(memberPage[cursor].dropFirst(8).dropLast())
        #expect(
            failure(outsider, "history", ["conversation": "general", "cursor": .string(stolen)])?
                .contains("is not a cursor this server gave") == true)
        #expect(!(try outsider.call("conversations", arguments: [:])).contains(dm))
        #expect(throws: ToolError.self) { try outsider.read(uri: "slackindex://conversation/\(dm)") }
    }

    @Test func tokensFollowServesRulesAndARevokedTokenStops() throws {
        let admin = try archive.createToken(userID: APIFixture.adminUser, isAdmin: true)
        let plain = try archive.createToken(userID: APIFixture.outsider)
        let asAdmin = ArchiveTools(archive: archive, viewer: .token(admin.token))
        let asPlain = ArchiveTools(archive: archive, viewer: .token(plain.token))
        #expect(try asAdmin.call("history", arguments: ["conversation": .string(APIFixture.dm)]).contains(APIFixture.dm))
        #expect(failure(asPlain, "history", ["conversation": .string(APIFixture.dm)]) != nil)
        try archive.revokeToken(id: plain.record.id)
        #expect(failure(asPlain, "archive_facts", [:])?.contains("no longer valid") == true)
    }

    @Test func errorsSayWhatToSend() throws {
        let misspelt = try #require(failure(outsider, "history", ["conversation": "genral"]))
        #expect(misspelt.contains("the closest names are #general"), "\(misspelt)")
        // A conversation the viewer is not in is never suggested, though its name is one edit away.
        let hidden = try #require(
            try archive.conversations().first {
                $0.kind != .channel && !$0.members.contains(APIFixture.outsider) && $0.members.contains(APIFixture.dmMembers[0])
            })
        #expect(try member.call("conversations", arguments: ["limit": 500]).contains(hidden.displayName + "  "))
        let near = try #require(failure(outsider, "history", ["conversation": .string(hidden.name + "x")]))
        #expect(near.hasPrefix("No conversation called") && !near.contains(hidden.displayName + ","), "\(near)")
        #expect(!near.contains(hidden.displayName + "."), "\(near)")
        let asMember = try #require(failure(member, "history", ["conversation": .string(hidden.name + "x")]))
        #expect(asMember.contains("closest names are " + hidden.displayName), "\(asMember)")
        let date = try #require(failure(outsider, "history", ["conversation": "general", "after": "03/15/2024"]))
        #expect(date.contains("which names no message or time") && date.contains("2024-05-01"))
        let searchDate = try #require(failure(outsider, "search", ["query": "deploy", "after": "someday"]))
        #expect(searchDate.contains("is not a date. Dates are a date (2024-05-01)"))
        #expect(failure(outsider, "search", ["query": "deploy", "limt": 3])?.contains("does not take 'limt'") == true)
        #expect(failure(outsider, "search", ["query": "deploy", "limit": 0])?.contains("between 1 and 100") == true)
        #expect(failure(outsider, "search", ["query": .array([])])?.contains("must be a string") == true)
        #expect(failure(outsider, "search", ["query": "deploy", "sort": "best"])?.contains("relevance, newest, oldest") == true)
        #expect(failure(outsider, "search", [:])?.contains("'query' is required") == true)
        #expect(failure(outsider, "thread", ["message": "#general/1000000000.000001"])?.hasPrefix("No message with ts") == true)
        #expect(throws: ToolError.self) { try outsider.call("delete_everything", arguments: nil) }
    }

    @Test func historyBetweenDatesPagesForwardAndBack() throws {
        let all = try APIFixture.exportHistory(folder: "general").reversed().map { $0 }
        let zone = try outsider.timeZone(outsider.viewerToken())
        let lower = try #require(Day(year: 2024, month: 5, day: 1)).startEpochMicros(in: zone)
        let upper = try #require(Day(year: 2024, month: 6, day: 1)).startEpochMicros(in: zone)
        let expected = all.filter { (lower..<upper).contains(SampleOracle.micros($0)) }
        try #require(expected.count > 14, "three pages of 7 at least")
        for after in [true, false] {
            var arguments: [String: Value] = ["conversation": "#general", "before": "2024-06-01", "limit": 7]
            if after { arguments["after"] = "2024-05-01" }
            var pages: [[String]] = []
            for _ in 0..<100 {
                let text = try outsider.call("history", arguments: arguments)
                pages.append(Self.ts(Self.handles(text)))
                guard let range = text.range(of: #"cursor "[^"]+""#, options: .regularExpression) else { break }
                arguments["cursor"] = .string(String(text[range].dropFirst(8).dropLast()))
            }
            // Forward from `after`: pages in order; back from `before`: newest page first, until the bound.
            let read = after ? pages.flatMap { $0 } : pages.reversed().flatMap { $0 }
            #expect((after ? read : Array(read.drop { !expected.contains($0) })) == expected, "after: \(after)")
        }
    }

    @Test func aroundAReplyShowsItsThreadAndAroundAMessageItsNeighbours() throws {
        let reply = try outsider.call("messages_around", arguments: ["message": "#general/1716187032.093639"])
        #expect(reply.contains("(a reply: its thread around it)"))
        #expect(reply.contains("▶ ") && reply.split(separator: "\n").contains { $0.hasPrefix("▶") && $0.contains("1716187032.093639") })
        let history = try APIFixture.exportHistory(folder: "general").reversed().map { $0 }
        let index = try #require(history.firstIndex(of: "1716185438.024538"))
        let around = try outsider.call("messages_around", arguments: ["message": "#general/1716185438.024538", "limit": 5])
        #expect(Self.ts(Self.handles(around)) == Array(history[(index - 2)...(index + 2)]))
    }

    @Test func conversationsUsersAndFactsCountWhatTheViewerSees() throws {
        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let user = APIFixture.outsider
        let visible = oracle.conversations.filter { $0.kind == "channel" || $0.members.contains(user) }
        let listed = try outsider.call("conversations", arguments: ["limit": 500])
        #expect(listed.split(separator: "\n").count == visible.count)
        #expect(try outsider.call("conversations", arguments: ["name": "GEN"]).hasPrefix("#general "))
        let facts = try outsider.call("archive_facts", arguments: [:])
        #expect(facts.contains("Conversations you can see: \(visible.count) "))
        let ids = Set(visible.map(\.id))
        #expect(facts.contains("Messages in them: \(oracle.messages.filter { ids.contains($0.conversationID) }.count)"))
        let handle = try #require(oracle.userIDs.first { $0.value == user }?.key)
        let misspelt = String(handle.dropLast()) + "q"
        #expect(try outsider.call("users", arguments: ["name": .string(misspelt)]).contains("@\(handle)  \(user)"))
    }

    @Test func promptsAndResourcesCheckTheirArguments() throws {
        let prompt = try outsider.prompt("summarise_conversation", arguments: ["conversation": "general", "after": "may"])
        #expect(prompt.contains("history tool") && prompt.contains("#general"))
        #expect(throws: ToolError.self) {
            try outsider.prompt("summarise_conversation", arguments: ["conversation": APIFixture.dm])
        }
        let thread = try outsider.read(uri: "slackindex://thread/\(try APIFixture.conversationID(folder: "general"))/1716185438.024538")
        #expect(Self.ts(Self.handles(thread)).count == 9)
        #expect(throws: ToolError.self) { try outsider.read(uri: "file:///etc/passwd") }
    }

    @Test func fuzzSeedsRunCleanAndAShortRunFindsNothing() throws {
        func inputs(_ kind: String) throws -> [[UInt8]] {
            let folder = FuzzTests.fuzz.appendingPathComponent(kind).appendingPathComponent(MCPFuzzTarget.name)
            guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
            return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
                .filter { !$0.hasPrefix(".") }.map { [UInt8](try Data(contentsOf: folder.appendingPathComponent($0))) }
        }
        let seeds = try inputs("corpus")
        #expect(seeds.count >= 4)
        for input in try seeds + inputs("regressions") { #expect(MCPFuzzTarget.run(input) == nil) }
        var loop = FuzzLoop(corpus: seeds, seed: 20_261_128, run: MCPFuzzTarget.run)
        let report = loop.run(seconds: 8)
        // Each input that is not a call runs ~40 calls (every argument of every tool, URIs, prompts): ~7 a second
        // in the debug build.
        #expect(report.executions > 30, "\(report.executions) executions")
        #expect(report.findings.isEmpty, "\(report.findings.map(\.description))")
    }
}
