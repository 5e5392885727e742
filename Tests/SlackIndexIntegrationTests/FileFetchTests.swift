import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

@testable import SlackIndex
@testable import SlackIndexServer
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// A stand-in for Slack's file host on loopback: answers `/files-pri/T1-<id>/…` by the file id, and counts requests
/// per id. Every answer but the sign-in page needs `Authorization: Bearer <token>`.
final class FileHostStandIn: Sendable {
    /// What the host does for a file id.
    enum Behaviour: Sendable {
        case ok([UInt8])
        case status(Int)
        /// 429 with `Retry-After: seconds` the first time, then the bytes.
        case rateLimitedOnce(seconds: Int, [UInt8])
        /// Announces the bytes' length, sends half of them and closes the connection.
        case dropHalfWay([UInt8])
        /// Slack's answer without a valid token: an HTML page, status 200.
        case signInPage
    }

    let behaviours: [String: Behaviour]
    let token: String
    private let counts = Mutex([String: Int]())
    private let task = Mutex<Task<Void, any Error>?>(nil)

    init(_ behaviours: [String: Behaviour], token: String = "xoxp-test-token") {
        self.behaviours = behaviours
        self.token = token
    }

    /// Requests so far for file `id`.
    func requests(_ id: String) -> Int { counts.withLock { $0[id] ?? 0 } }
    var totalRequests: Int { counts.withLock { $0.values.reduce(0, +) } }

    /// Starts listening on a free loopback port; returns the base URL.
    func start() async throws -> String {
        let router = Router()
        router.get("**") { request, _ in self.answer(request) }
        return try await Self.listen(router, task: task)
    }

    /// Runs `router` on a free loopback port in a task kept in `task` (cancelled to stop); returns the base URL.
    static func listen(_ router: Router<BasicRequestContext>, task: borrowing Mutex<Task<Void, any Error>?>) async throws -> String {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            })
        task.withLock { $0 = Task { try await app.run() } }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        return "http://127.0.0.1:\(port)"
    }

    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = try? await running?.value
    }

    private func answer(_ request: Request) -> Response {
        // /files-pri/T1-<id>/… or /files-pri/T1-<id>/download/…
        let parts = request.uri.path.split(separator: "/")
        guard parts.count >= 2, let dash = parts[1].firstIndex(of: "-") else { return Response(status: .notFound) }
        let id = String(parts[1][parts[1].index(after: dash)...])
        let number = counts.withLock { c -> Int in
            c[id, default: 0] += 1
            return c[id] ?? 0
        }
        guard let behaviour = behaviours[id] else { return Response(status: .notFound) }
        if case .signInPage = behaviour {
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "<!DOCTYPE html><html><body>Sign in to Slack</body></html>")))
        }
        guard request.headers[.authorization] == "Bearer \(token)" else { return Response(status: .forbidden) }
        switch behaviour {
        case .ok(let bytes):
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        case .status(let code):
            return Response(status: HTTPResponse.Status(code: code))
        case .rateLimitedOnce(let seconds, let bytes):
            if number == 1 { return Response(status: .tooManyRequests, headers: [.retryAfter: String(seconds)]) }
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        case .dropHalfWay(let bytes):
            return Response(
                status: .ok, headers: [.contentLength: String(bytes.count)],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(bytes: bytes.prefix(bytes.count / 2)))
                    throw CancellationError()
                })
        case .signInPage:
            return Response(status: .internalServerError)
        }
    }
}

@Suite struct FileFetchTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 3000)
    static let snippet = Array("def deploy():\n    return 'the quokka release'\n".utf8)
    static let rateLimited = Array("%PDF-1.4 a small pdf".utf8) + Array(repeating: 1, count: 500)

    /// One file object of a message, as Slack writes it.
    static func file(
        _ id: String, name: String, mimetype: String = "application/octet-stream", size: Int = 100,
        mode: String = "hosted", host: String = "https://files.slack.com"
    ) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        let path = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
        return """
        {"id":"\(id)","name":"\(name)","title":"\(name)","mimetype":"\(mimetype)","filetype":"\
        \((name as NSString).pathExtension)","size":\(size),"mode":"\(mode)",\
        "url_private":"\(host)/files-pri/T1-\(id)/\(path)",\
        "url_private_download":"\(host)/files-pri/T1-\(id)/download/\(path)"}
        """
    }

    /// An archive whose `general` carries the thirteen files of the stand-in's cases, one message each.
    static func archive() throws -> Archive {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: try export().path)
        return archive
    }

    /// The export `archive()` imports.
    static func export() throws -> URL {
        let files = [
            file("FPNG", name: "cat.png", mimetype: "image/png", size: png.count),
            file("FTXT", name: "deploy.py", mimetype: "text/plain", mode: "snippet"),
            file("FDUP", name: "../../etc/cat-again.png", mimetype: "image/png"),
            file("FRATE", name: "report.pdf", mimetype: "application/pdf"),
            file("F404", name: "gone.txt"),
            #"{"id":"FHIDDEN","mode":"hidden_by_limit"}"#,
            file("FTOMB", name: "deleted.txt", mode: "tombstone"),
            file("F403", name: "secret.txt"),
            file("FLOGIN", name: "login.pdf", mimetype: "application/pdf"),
            file("FBIG", name: "big.bin", size: 1000),
            file("FBIGMETA", name: "huge.mov", size: 50_000_000),
            file("FDROP", name: "dropped.zip", size: 4000),
            file("FEXT", name: "doc.gdoc", mode: "external", host: "https://docs.google.com"),
        ]
        let day = "[" + files.enumerated().map { index, file in
            #"{"type":"message","user":"U1","text":"file \#(index)","ts":"1714000000.\#(String(format: "%06d", index + 1))","files":[\#(file)]}"#
        }.joined(separator: ",") + "]"
        return try TestSupport.minimalExport(days: ["2024-04-24": day])
    }

    static let standIn: [String: FileHostStandIn.Behaviour] = [
        "FPNG": .ok(png), "FTXT": .ok(snippet), "FDUP": .ok(png),
        "FRATE": .rateLimitedOnce(seconds: 1, rateLimited),
        "F404": .status(404), "F403": .status(403), "FLOGIN": .signInPage,
        "FBIG": .ok(Array(repeating: 9, count: 70_000)),
        "FDROP": .dropHalfWay(Array(repeating: 5, count: 40_000)),
        // Never asked for: deleted, over the cap by Slack's size, or hosted elsewhere.
        "FHIDDEN": .ok([1]), "FTOMB": .ok([1]), "FBIGMETA": .ok([1]), "FEXT": .ok([1]),
    ]

    static func fetch(_ archive: Archive, host: String, token: String = "xoxp-test-token") async throws
        -> FileFetcher.Report
    {
        var policy = SlackWebClient.Policy()
        policy.maxAttempts = 2
        policy.backoff = .milliseconds(20)
        policy.maxBackoff = .milliseconds(50)
        let client = try SlackWebClient(baseURL: host, token: token, policy: policy)
        var options = FileFetcher.Options()
        options.fileHost = host
        options.maxBytes = 64_000
        do {
            let report = try await FileFetcher(archive: archive, client: client, options: options).run()
            await client.shutdown()
            return report
        } catch {
            await client.shutdown()
            throw error
        }
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    @Test func fetchesEveryFetchableFileOnceAndCountsTheRestExactly() async throws {
        let archive = try Self.archive()
        let host = FileHostStandIn(Self.standIn)
        let base = try await host.start()
        let blobs = FileBlobs(archivePath: archive.path)
        // A temporary file of a process killed half way (no such pid): removed, never counted.
        try FileManager.default.createDirectory(atPath: blobs.root + "/tmp", withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: blobs.root + "/tmp/2147483600-1.part"))

        let first = try await Self.fetch(archive, host: base)
        #expect(first.files == 13)
        #expect(first.downloaded == 4)
        #expect(first.deduplicated == 1, "FDUP has FPNG's bytes")
        #expect(first.alreadyThere == 0)
        #expect(first.gone == 3, "404, hidden_by_limit, tombstone")
        #expect(first.refused == 2, "403 and the sign-in page")
        #expect(first.tooLarge == 2, "over the cap by its bytes, and by Slack's size")
        #expect(first.failed == 1, "dropped half way, twice")
        #expect(first.external == 1)
        #expect(first.rateLimited == 1)
        #expect(first.waitedSeconds >= 1)
        #expect(first.bytes == Int64(2 * Self.png.count + Self.snippet.count + Self.rateLimited.count))
        for id in ["FHIDDEN", "FTOMB", "FBIGMETA", "FEXT"] { #expect(host.requests(id) == 0, "\(id) was asked for") }
        #expect(host.requests("FRATE") == 2)
        #expect(host.requests("FDROP") == 2)

        // Each stored file maps to a blob named by its bytes' SHA-256, holding exactly those bytes; one blob for
        // the two files with the same bytes, and no other blob or temporary file.
        let stored = try archive.store.fileBlobs()
        #expect(Set(stored.keys) == ["FPNG", "FTXT", "FDUP", "FRATE"])
        for (id, bytes) in [("FPNG", Self.png), ("FTXT", Self.snippet), ("FDUP", Self.png), ("FRATE", Self.rateLimited)] {
            let blob = try #require(stored[id])
            #expect(blob.sha256 == Self.sha256(bytes))
            let path = try #require(blobs.path(of: blob.sha256))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes))
        }
        #expect(stored["FPNG"]?.contentType == "image/png")
        #expect(stored["FTXT"]?.contentType == "text/plain; charset=utf-8")
        #expect(stored["FRATE"]?.contentType == "application/pdf")
        #expect(blobs.diskUsage().blobs == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: blobs.root + "/tmp").isEmpty)

        // A second run asks only for what is still missing and stores nothing new.
        let before = host.totalRequests
        let second = try await Self.fetch(archive, host: base)
        #expect(second.downloaded == 0)
        #expect(second.alreadyThere == 4)
        #expect(second.gone == 3 && second.refused == 2 && second.tooLarge == 2 && second.failed == 1)
        for id in ["FPNG", "FTXT", "FDUP", "FRATE"] { #expect(host.requests(id) == (id == "FRATE" ? 2 : 1)) }
        #expect(host.totalRequests - before == 6, "F404, F403, FLOGIN and FBIG once each, FDROP twice")
        #expect(blobs.diskUsage().blobs == 3)
        await host.stop()
    }

    /// A word only in an attached text snippet finds its message once the file is fetched, and the hit says it
    /// matched in the file; the archive stays consistent for `check`, and the same import again (the message
    /// unchanged) or another run keeps the words indexed once.
    @Test func aWordOnlyInAnAttachedSnippetFindsItsMessage() async throws {
        let archive = try Self.archive()
        let engine = SearchEngine(archive: archive)
        #expect(try engine.search("quokka").hits.isEmpty, "the word is in no message's own text")
        let host = FileHostStandIn(Self.standIn)
        let base = try await host.start()
        _ = try await Self.fetch(archive, host: base)

        let hits = try engine.search("quokka").hits
        #expect(hits.count == 1)
        let hit = try #require(hits.first)
        #expect(hit.message.text == "file 1")
        #expect(hit.matchedFile == "deploy.py")
        #expect(hit.snippet.contains(Highlight.start + "quokka" + Highlight.end))
        // A word of the message's own text is matched there, not in a file.
        #expect(try engine.search("\"file 1\"").hits.first?.matchedFile == nil)
        // Binary files' bytes are not indexed ("%PDF-1.4 a small pdf…").
        #expect(try engine.search("small").hits.isEmpty)

        _ = try await Self.fetch(archive, host: base)
        _ = try Importer(archive: archive).importExport(at: try Self.export().path)
        #expect(try engine.search("quokka").hits.count == 1)
        let report = try ArchiveChecker(archive: archive).run()
        #expect(report.findings.isEmpty, "\(report.findings)")
        await host.stop()
    }

    /// A blob that is not whole on disk (damaged or removed after the run) is fetched again; the token is only sent
    /// where it may go.
    @Test func aBlobMissingOnDiskIsFetchedAgain() async throws {
        let archive = try Self.archive()
        let host = FileHostStandIn(Self.standIn)
        let base = try await host.start()
        _ = try await Self.fetch(archive, host: base)
        let blobs = FileBlobs(archivePath: archive.path)
        let blob = try #require(try archive.store.fileBlob(id: "FTXT"))
        let path = try #require(blobs.path(of: blob.sha256))
        try Data([1]).write(to: URL(fileURLWithPath: path))
        let again = try await Self.fetch(archive, host: base)
        #expect(again.downloaded == 1)
        #expect(again.alreadyThere == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(Self.snippet))
        await host.stop()
    }

    @Test func aWrongTokenIsRefusedNotStored() async throws {
        let archive = try Self.archive()
        let host = FileHostStandIn(Self.standIn)
        let base = try await host.start()
        let report = try await Self.fetch(archive, host: base, token: "xoxp-wrong")
        #expect(report.downloaded == 0)
        #expect(report.refused == 9, "every file asked for: 403, or the sign-in page")
        #expect(try archive.store.fileBlobs().isEmpty)
        await host.stop()
    }

    /// A host that fails file after file ends the run with an error saying so, instead of being waited out.
    @Test func aFailingHostStopsTheRun() async throws {
        let archive = try Self.archive()
        let host = FileHostStandIn(Self.standIn.mapValues { _ in .status(500) })
        let base = try await host.start()
        await #expect(throws: FileFetchError.self) { try await Self.fetch(archive, host: base) }
        #expect(try archive.store.fileBlobs().isEmpty)
        await host.stop()
    }

    @Test func onlySlackHostsGetTheToken() throws {
        let archive = try TestSupport.makeArchive()
        let client = try SlackWebClient(baseURL: SlackWebClient.slackAPI, token: "xoxp-x")
        defer { Task { await client.shutdown() } }
        let fetcher = FileFetcher(archive: archive, client: client)
        #expect(fetcher.target(of: "https://files.slack.com/files-pri/T1-F1/a.png")?.1 == true)
        #expect(fetcher.target(of: "http://files.slack.com/files-pri/T1-F1/a.png") == nil)
        #expect(fetcher.target(of: "https://files.slack.com.evil.example/a.png") == nil)
        #expect(fetcher.target(of: "https://docs.google.com/a") == nil)
    }

    @Test(arguments: [
        (Array("<!DOCTYPE html><p>x".utf8), "photo.png", "image/png", "text/html; charset=utf-8"),
        (Array("<svg xmlns='http://www.w3.org/2000/svg'/>".utf8), "a.png", "image/png", "image/svg+xml"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0], "a.txt", "text/plain", "image/png"),
        ([0, 1, 2, 3], "a.png", "image/png", "application/octet-stream"),
        (Array("a,b\n1,2\n".utf8), "t.csv", "text/csv", "text/csv; charset=utf-8"),
        (Array("print(1)".utf8), "x.py", "text/x-python", "text/plain; charset=utf-8"),
        ([0x50, 0x4B, 0x03, 0x04, 0], "r.docx", "application/zip",
         "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ] as [([UInt8], String, String, String)])
    func typeComesFromTheBytes(bytes: [UInt8], name: String, mimetype: String, expected: String) {
        #expect(FileType.decide(prefix: bytes, name: name, mimetype: mimetype) == expected)
    }

    /// `slackindex files` as a user runs it: the JSON report's counts, exit 2 while some are not fetched, the
    /// text report of a second run, and no token.
    @Test func theCommandReportsAndExitsTwoWhenSomeAreNotFetched() async throws {
        let archive = try Self.archive()
        // The client's own retries (up to 6, over 15 s) for a dropped connection are not for a test's time: the
        // host answers that file with a status no retry fixes.
        var behaviours = Self.standIn
        behaviours["FDROP"] = .status(418)
        let host = FileHostStandIn(behaviours)
        let base = try await host.start()
        let config = TestSupport.temporaryDirectory().path
        let arguments = ["--db", archive.path, "files", "--file-host", base, "--max-size", "64KB", "--quiet"]
        let first = try await CLITests.run(
            arguments + ["--json"], environment: ["SLACK_TOKEN": "xoxp-test-token", "XDG_CONFIG_HOME": config])
        #expect(first.status == 2, "\(first.stderr)")
        let report = try CLITests.json(Substring(first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(report["downloaded"] as? Int == 4)
        #expect(report["already_there"] as? Int == 0)
        #expect(report["gone"] as? Int == 3)
        #expect(report["refused"] as? Int == 2)
        #expect(report["too_large"] as? Int == 2)
        #expect(report["failed"] as? Int == 1)
        #expect(report["external"] as? Int == 1)

        let second = try await CLITests.run(arguments, environment: ["SLACK_TOKEN": "xoxp-test-token", "XDG_CONFIG_HOME": config])
        #expect(second.status == 2)
        #expect(second.stdout.contains("Fetched 0 of 13 files"), "\(second.stdout)")
        #expect(
            second.stdout.contains(
                "downloaded 0, already there 4, gone 3, refused 2, too large 2, failed 1, external 1"))
        #expect(second.stderr.contains("Not fetched: FDROP: HTTP 418"), "\(second.stderr)")

        let noToken = try await CLITests.run(arguments, environment: ["SLACK_TOKEN": "", "XDG_CONFIG_HOME": config])
        #expect(noToken.status == 1)
        #expect(noToken.stderr.contains("No Slack token"), "\(noToken.stderr)")

        let badSize = try await CLITests.run(arguments + ["--max-size", "lots"], environment: ["XDG_CONFIG_HOME": config])
        #expect(badSize.status == 64)
        await host.stop()
    }
}

/// Thumbnails (issue 52: "images inline, thumbnails, click for the full image"): `files` stores Slack's
/// `thumb_480` (or the nearest size) of each stored image larger than 64 KiB, `serve` answers it at
/// `/files/ID?thumb=1` to the file's readers only, and the web UI's timeline page lists which files have one.
extension FileFetchTests {
    static let photo: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 3, count: 100_000)
    static let thumb: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 4, count: 2_000)

    static func thumbnailExport() throws -> URL {
        func message(_ ts: String, _ id: String, _ name: String, size: Int, thumbs: String) -> String {
            let file = Self.file(id, name: name, mimetype: "image/png", size: size)
            let withThumbs = String(file.dropLast()) + "," + thumbs + "}"
            return #"{"type":"message","user":"U1","text":"\#(name)","ts":"\#(ts)","files":[\#(withThumbs)]}"#
        }
        let tmb = "https://files.slack.com/files-tmb"
        let day = "[" + [
            message("1714000000.000100", "FPHOTO", "photo.png", size: photo.count,
                    thumbs: #""thumb_64":"\#(tmb)/T1-FPHOTO-small/p_64.png","thumb_480":"\#(tmb)/T1-FPHOTO-tmb/p_480.png""#),
            message("1714000000.000200", "FSMALL", "icon.png", size: png.count,
                    thumbs: #""thumb_480":"\#(tmb)/T1-FSMALL-tmb/i_480.png""#),
            message("1714000000.000300", "FBADTHUMB", "scan.png", size: photo.count,
                    thumbs: #""thumb_360":"\#(tmb)/T1-FBADTHUMB-tmb/s_360.png""#),
            message("1714000000.000400", "FNOTHUMB", "plain.png", size: photo.count, thumbs: #""pretty_type":"PNG""#),
        ].joined(separator: ",") + "]"
        return try TestSupport.writeExport([
            "users.json": #"[{"id":"U1","name":"ann","team_id":"T1"},{"id":"U2","name":"bo","team_id":"T1"}]"#,
            "channels.json": #"[{"id":"C1","name":"general","created":"1433558319","members":["U1","U2"]}]"#,
            "groups.json": #"[{"id":"G1","name":"secret","created":"1433558319","members":["U1"]}]"#,
            "secret/2024-04-24.json": day,
        ])
    }

    @Test func imagesThumbnailsAreStoredOnceAndServedToTheirReadersOnly() async throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: try Self.thumbnailExport().path)
        let host = FileHostStandIn([
            "FPHOTO": .ok(Self.photo), "FPHOTO-tmb": .ok(Self.thumb), "FPHOTO-small": .ok(Self.thumb),
            "FSMALL": .ok(Self.png), "FSMALL-tmb": .ok(Self.thumb),
            "FBADTHUMB": .ok(Self.photo), "FBADTHUMB-tmb": .status(404),
            "FNOTHUMB": .ok(Self.photo),
        ])
        let base = try await host.start()
        var policy = SlackWebClient.Policy()
        policy.maxAttempts = 1
        let client = try SlackWebClient(baseURL: base, token: "xoxp-test-token", policy: policy)
        var options = FileFetcher.Options()
        options.fileHost = base
        let first = try await FileFetcher(archive: archive, client: client, options: options).run()
        #expect(first.downloaded == 4, "\(first)")
        #expect(first.thumbnails == 1 && first.thumbnailsGone == 1 && first.thumbnailsFailed == 0, "\(first)")
        #expect(first.thumbnailsAlreadyThere == 0 && first.thumbnailProblems.isEmpty, "\(first)")
        #expect(first.notFetched == 0 && first.problems.isEmpty, "a thumbnail is not a file: \(first)")
        #expect(host.requests("FPHOTO-tmb") == 1 && host.requests("FPHOTO-small") == 0, "thumb_480 first")
        #expect(host.requests("FSMALL-tmb") == 0, "a 3 KB image is shown as it is")
        let stored = try archive.store.fileThumbs()
        #expect(Set(stored.keys) == ["FPHOTO"])
        #expect(stored["FPHOTO"]?.sha256 == Self.sha256(Self.thumb) && stored["FPHOTO"]?.contentType == "image/jpeg")

        let second = try await FileFetcher(archive: archive, client: client, options: options).run()
        #expect(second.thumbnails == 0 && second.thumbnailsAlreadyThere == 1 && second.thumbnailsGone == 1, "\(second)")
        #expect(host.requests("FPHOTO-tmb") == 1 && host.requests("FBADTHUMB-tmb") == 1, "neither asked for again")
        await client.shutdown()
        await host.stop()

        let api = SlackAPI(archive: archive)
        let member = try archive.createToken(userID: "U1").token
        let outsider = try archive.createToken(userID: "U2").token
        let router = SlackAPIServer.buildRouter(api: api, ui: WebUI())
        func get(_ path: String, _ token: String) async throws -> (HTTPResponse.Status, [UInt8], String?) {
            try await Application(router: router).test(.router) { client in
                try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer \(token)"]) {
                    ($0.status, Array(buffer: $0.body), $0.headers[.contentType])
                }
            }
        }
        let thumbnail = try await get("/files/FPHOTO?thumb=1", member)
        #expect(thumbnail.0 == .ok && thumbnail.1 == Self.thumb && thumbnail.2 == "image/jpeg")
        #expect(try await get("/files/FPHOTO", member).1 == Self.photo, "the whole image stays at its own URL")
        #expect(try await get("/files/FPHOTO?thumb=1", outsider).0 == .notFound)
        #expect(try await get("/files/FSMALL?thumb=1", member).0 == .notFound)

        let page = await api.call("slackindex.timeline", parameters: ["channel": "G1"], bearer: member)
        #expect(page.body.contains(#""stored_thumbs":["FPHOTO"]"#), "\(page.body)")
        #expect(WebAssets.script.contains("S.thumbs.has(f.id) ? url + '?thumb=1' : url"))
    }
}

extension FileFetchTests {
    /// A rerun over stored images whose thumbnails are missing asks only for the thumbnails: when the host is down,
    /// the run stops after `failuresToStop` of them as it does for files, rather than waiting each one out.
    @Test func thumbnailsThatGetNoAnswerStopTheRunLikeFiles() async throws {
        let tmb = "https://files.slack.com/files-tmb"
        let ids = (1...10).map { "FIMG\($0)" }
        let day = "[" + ids.enumerated().map { index, id in
            let file = String(Self.file(id, name: "p\(index).png", mimetype: "image/png", size: Self.photo.count).dropLast())
                + #","thumb_480":"\#(tmb)/T1-\#(id)-tmb/p_480.png"}"#
            return #"{"type":"message","user":"U1","text":"p\#(index)","ts":"1714000000.\#(String(format: "%06d", index + 1))","files":[\#(file)]}"#
        }.joined(separator: ",") + "]"
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: try TestSupport.minimalExport(days: ["2024-04-24": day]).path)
        var behaviours: [String: FileHostStandIn.Behaviour] = [:]
        for id in ids {
            behaviours[id] = .ok(Self.photo)
            behaviours[id + "-tmb"] = .status(503)
        }
        let host = FileHostStandIn(behaviours)
        let base = try await host.start()
        var policy = SlackWebClient.Policy()
        policy.maxAttempts = 1
        // A refused connection told at once (AsyncHTTPClient would try to connect again until its timeout).
        policy.retriesConnections = false
        var options = FileFetcher.Options()
        options.fileHost = base
        options.parallel = 1
        let client = try SlackWebClient(baseURL: base, token: "xoxp-test-token", policy: policy)
        let first = try await FileFetcher(archive: archive, client: client, options: options).run()
        // Each file downloaded in between: the host answers.
        #expect(first.downloaded == 10 && first.thumbnailsFailed == 10, "\(first)")
        await host.stop()
        await #expect(throws: FileFetchError.self) {
            _ = try await FileFetcher(archive: archive, client: client, options: options).run()
        }
        await client.shutdown()
    }
}
