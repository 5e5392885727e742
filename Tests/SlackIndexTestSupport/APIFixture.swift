import Foundation
import SlackIndex
import SlackIndexServer
import Synchronization
import Testing

/// An archive of sample-data with an API in front of it, and the export's own files to check answers against.
struct APIFixture {
    let archive: Archive
    let api: SlackAPI
    /// An admin token (its user is `adminUser`).
    let admin: String

    /// The DM the access tests use, its two members, and a user who is in neither it nor any private channel
    /// with them.
    static let dm = "D0VC4NV56E1"
    static let dmMembers = ["U0Y0Y4MV2ZG", "U00ALA1H73L"]
    static let outsider = "U0NYQG8S2T7"
    static let adminUser = "U0T28J57VPZ"

    init(pages: Bool = false, rateLimit: RateLimit = RateLimit(requests: 1_000_000, interval: .seconds(1)),
        now: (@Sendable () -> Duration)? = nil, remote: (any RemoteSearch)? = nil,
        remoteDeadline: Duration = .seconds(2)) throws
    {
        archive = try TestSupport.sampleArchive()
        if pages { _ = Importer(archive: archive).importPaths([TestSupport.samplePages]) }
        var configuration = SlackAPIConfiguration(rateLimit: rateLimit, now: now)
        configuration.remote = remote
        configuration.remoteDeadline = remoteDeadline
        api = SlackAPI(archive: archive, configuration: configuration)
        admin = try archive.createToken(userID: Self.adminUser, isAdmin: true, label: "tests").token
    }

    /// A plain token for `user`.
    func token(for user: String) throws -> String {
        try archive.createToken(userID: user).token
    }

    /// Calls a method and parses the body.
    func call(_ method: String, _ parameters: [String: String] = [:], token: String?) async throws -> [String: Any] {
        let response = await api.call(method, parameters: parameters, bearer: token)
        #expect(response.status == 200, "\(method): HTTP \(response.status)")
        return try #require(
            try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any], "\(response.body)")
    }

    /// Calls a method that must succeed.
    func ok(_ method: String, _ parameters: [String: String] = [:], token: String? = nil) async throws
        -> [String: Any]
    {
        let body = try await call(method, parameters, token: token ?? admin)
        #expect(body["ok"] as? Bool == true, "\(method) \(parameters): \(body["error"] ?? "")")
        return body
    }

    /// Calls a method that must fail with `error`.
    func fails(_ method: String, _ parameters: [String: String] = [:], token: String?, with error: String) async throws {
        let body = try await call(method, parameters, token: token)
        #expect(body["ok"] as? Bool == false)
        #expect(body["error"] as? String == error, "\(method) \(parameters): \(body)")
    }

    /// Follows `response_metadata.next_cursor` to the end; returns every page's body.
    func pages(_ method: String, _ parameters: [String: String], token: String? = nil) async throws
        -> [[String: Any]]
    {
        var out: [[String: Any]] = []
        var cursor: String?
        repeat {
            var arguments = parameters
            if let cursor { arguments["cursor"] = cursor }
            let body = try await ok(method, arguments, token: token)
            out.append(body)
            let metadata = try #require(body["response_metadata"] as? [String: Any])
            let next = try #require(metadata["next_cursor"] as? String)
            if let hasMore = body["has_more"] as? Bool { #expect(hasMore == !next.isEmpty) }
            cursor = next.isEmpty ? nil : next
            try #require(out.count < 10_000, "no end to the pages")
        } while cursor != nil
        return out
    }

    // MARK: The export's own files

    /// Every message object of a conversation's folder in the export, in file order.
    static func exportMessages(folder: String) throws -> [[String: Any]] {
        let directory = URL(fileURLWithPath: TestSupport.sampleFolder).appendingPathComponent(folder)
        let days = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
            .sorted()
        return try days.flatMap { day in
            try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(day)))
                as? [[String: Any]] ?? []
        }
    }

    /// The channel view of a folder per the export: top-level messages, thread parents, broadcasts; newest first.
    static func exportHistory(folder: String) throws -> [String] {
        try exportMessages(folder: folder).filter { object in
            let ts = object["ts"] as? String
            let thread = object["thread_ts"] as? String
            return thread == nil || thread == ts || object["subtype"] as? String == "thread_broadcast"
        }.compactMap { $0["ts"] as? String }.sorted { SampleOracle.micros($0) > SampleOracle.micros($1) }
    }

    /// A conversation's id by folder name.
    static func conversationID(folder: String) throws -> String {
        try #require(try SampleOracle(folder: TestSupport.sampleFolder).conversation(folder: folder)).id
    }
}

/// A clock tests move by hand.
final class ManualTime: Sendable {
    private let value = Mutex<Duration>(.zero)

    var now: @Sendable () -> Duration { { [self] in value.withLock { $0 } } }

    func advance(by duration: Duration) {
        value.withLock { $0 += duration }
    }
}
