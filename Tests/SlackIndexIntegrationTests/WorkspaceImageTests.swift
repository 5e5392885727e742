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

/// A stand-in on loopback for Slack's `emoji.list` (`/api/emoji.list`, with the token) and its public image hosts
/// (any other path, by path): counts requests per path and notes any image request that carried a token.
final class ImageHostStandIn: Sendable {
    let images: [String: (status: Int, bytes: [UInt8])]
    let emojiList: String
    let token: String
    private let counts = Mutex([String: Int]())
    private let tokenSeenOnImages = Mutex(false)
    private let task = Mutex<Task<Void, any Error>?>(nil)

    init(images: [String: (status: Int, bytes: [UInt8])], emojiList: String, token: String = "xoxp-test-token") {
        self.images = images
        self.emojiList = emojiList
        self.token = token
    }

    func requests(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }
    var imageRequests: Int { counts.withLock { $0.filter { $0.key != "/api/emoji.list" }.values.reduce(0, +) } }
    var sawTokenOnImages: Bool { tokenSeenOnImages.withLock { $0 } }

    func start() async throws -> String {
        let router = Router()
        router.get("**") { request, _ in self.answer(request) }
        return try await FileHostStandIn.listen(router, task: task)
    }

    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = try? await running?.value
    }

    private func answer(_ request: Request) -> Response {
        let path = request.uri.path
        counts.withLock { $0[path, default: 0] += 1 }
        if path == "/api/emoji.list" {
            let body =
                request.headers[.authorization] == "Bearer \(token)" ? emojiList : #"{"ok":false,"error":"invalid_auth"}"#
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }
        if request.headers[.authorization] != nil { tokenSeenOnImages.withLock { $0 = true } }
        guard let image = images[path] else { return Response(status: .notFound) }
        return Response(
            status: HTTPResponse.Status(code: image.status), body: ResponseBody(byteBuffer: ByteBuffer(bytes: image.bytes)))
    }
}

@Suite struct WorkspaceImageTests {
    static let annPNG: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 1, count: 700)
    static let boJPEG: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 2, count: 900)
    static let annNewPNG: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 3, count: 500)
    static let parrotGIF: [UInt8] = Array("GIF89a".utf8) + Array(repeating: 4, count: 300)
    static let evilHTML = Array("<html><script>alert(1)</script></html>".utf8)

    /// `users.json` with profile images: ann (image_72), bo (only image_192), cy (an image that is gone), dee (none).
    static func users(annImage: String = "https://avatars.slack-edge.com/2024-01-01/ann_72.png") -> String {
        #"""
        [{"id":"U1","name":"ann","team_id":"T1","profile":{"image_72":"\#(annImage)","image_24":"https://avatars.slack-edge.com/2024-01-01/ann_24.png"}},
         {"id":"U2","name":"bo","team_id":"T1","profile":{"image_192":"https://avatars.slack-edge.com/2024-01-01/bo_192.jpg"}},
         {"id":"U3","name":"cy","team_id":"T1","profile":{"image_72":"https://secure.gravatar.com/avatar/cy.png"}},
         {"id":"U4","name":"dee","team_id":"T1","profile":{"image_72":"javascript:alert(1)"}}]
        """#
    }

    static let emojiList = #"""
        {"ok":true,"emoji":{"partyparrot":"https://emoji.slack-edge.com/T1/partyparrot/abc.gif","yay":"alias:partyparrot",
        "thumbs":"alias:+1","evil":"https://emoji.slack-edge.com/T1/evil/x.png","gone":"https://emoji.slack-edge.com/T1/gone/x.png",
        "loop1":"alias:loop2","loop2":"alias:loop1","odd":42},"cache_ts":"1714000000.000000"}
        """#

    static let images: [String: (status: Int, bytes: [UInt8])] = [
        "/2024-01-01/ann_72.png": (200, annPNG),
        "/2024-01-01/ann_new_72.png": (200, annNewPNG),
        "/2024-01-01/bo_192.jpg": (200, boJPEG),
        "/T1/partyparrot/abc.gif": (200, parrotGIF),
        "/T1/evil/x.png": (200, evilHTML),
    ]

    /// An archive with the four members, a public channel and a private one only U1 is in.
    static func archive() throws -> (Archive, URL) {
        let export = try TestSupport.writeExport([
            "users.json": users(),
            "channels.json": #"[{"id":"C1","name":"general","created":"1433558319","members":["U1","U2"]}]"#,
            "groups.json": #"[{"id":"G1","name":"secret","created":"1433558319","members":["U1"]}]"#,
            "general/2024-04-24.json": #"[{"type":"message","user":"U1","text":"hi :partyparrot:","ts":"1714000000.000100"}]"#,
            "secret/2024-04-24.json": #"[{"type":"message","user":"U1","text":"private","ts":"1714000000.000200"}]"#,
        ])
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: export.path)
        return (archive, export)
    }

    static func fetch(_ archive: Archive, host: String, token: String = "xoxp-test-token") async throws
        -> ImageFetcher.Report
    {
        var policy = SlackWebClient.Policy()
        policy.maxAttempts = 2
        policy.backoff = .milliseconds(20)
        let api = try SlackWebClient(baseURL: host + "/api/", token: token, policy: policy)
        let downloads = try SlackWebClient(baseURL: host, token: token, policy: policy)
        var options = ImageFetcher.Options()
        options.fileHost = host
        do {
            let report = try await ImageFetcher(archive: archive, api: api, downloads: downloads, options: options).run()
            await api.shutdown()
            await downloads.shutdown()
            return report
        } catch {
            await api.shutdown()
            await downloads.shutdown()
            throw error
        }
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    @Test func avatarsAndCustomEmojiAreStoredOnceWithoutTheToken() async throws {
        let (archive, _) = try Self.archive()
        let host = ImageHostStandIn(images: Self.images, emojiList: Self.emojiList)
        let base = try await host.start()

        let first = try await Self.fetch(archive, host: base)
        // ann, bo, cy have an http(s) image; dee's "javascript:" URL was never recorded.
        #expect(first.avatars == counts(total: 3, downloaded: 2, gone: 1, bytes: Int64(Self.annPNG.count + Self.boJPEG.count)))
        #expect(first.emojiListed == 7 && first.emojiAliases == 4, "odd (not a string) is skipped")
        // partyparrot stored; evil (HTML called .png) refused; gone 404.
        #expect(first.emoji == counts(total: 3, downloaded: 1, gone: 1, failed: 1, bytes: Int64(Self.parrotGIF.count)))
        #expect(first.problems == ["emoji evil: not an image (text/html; charset=utf-8)"])
        #expect(first.notFetched == 3)
        #expect(!host.sawTokenOnImages, "public images are fetched without the token")

        let store = archive.store
        #expect(try store.imageBlob(.avatar, key: "U1")?.sha256 == Self.sha256(Self.annPNG))
        #expect(try store.imageBlob(.avatar, key: "U2")?.contentType == "image/jpeg")
        #expect(try store.imageBlob(.emoji, key: "yay")?.sha256 == Self.sha256(Self.parrotGIF), "an alias resolves")
        #expect(try store.imageBlob(.emoji, key: "loop1") == nil, "a loop of aliases ends")
        #expect(try store.imageBlob(.emoji, key: "evil") == nil)
        let blobs = FileBlobs(archivePath: archive.path)
        #expect(blobs.contains(Self.sha256(Self.parrotGIF), size: Int64(Self.parrotGIF.count)))

        // A second run asks again only for what is missing.
        let second = try await Self.fetch(archive, host: base)
        #expect(second.avatars == counts(total: 3, alreadyThere: 2, gone: 1))
        #expect(second.emoji == counts(total: 3, alreadyThere: 1, gone: 1, failed: 1))
        #expect(host.requests("/2024-01-01/ann_72.png") == 1 && host.requests("/T1/partyparrot/abc.gif") == 1)

        // ann changed her picture: a sync or import records the new URL; the next run fetches it.
        let export = try TestSupport.writeExport([
            "users.json": Self.users(annImage: "https://avatars.slack-edge.com/2024-01-01/ann_new_72.png"),
            "channels.json": #"[{"id":"C1","name":"general","created":"1433558319","members":["U1","U2"]}]"#,
            "general/2024-04-25.json": #"[{"type":"message","user":"U1","text":"new","ts":"1714100000.000100"}]"#,
        ])
        _ = try Importer(archive: archive).importExport(at: export.path)
        #expect(try store.imageBlob(.avatar, key: "U1")?.sha256 == Self.sha256(Self.annPNG), "the old one until then")
        let third = try await Self.fetch(archive, host: base)
        #expect(third.avatars.downloaded == 1 && third.avatars.alreadyThere == 1)
        #expect(try store.imageBlob(.avatar, key: "U1")?.sha256 == Self.sha256(Self.annNewPNG))
        await host.stop()
    }

    @Test func aTokenWithoutEmojiReadIsReportedAndTheRestGoesOn() async throws {
        let (archive, _) = try Self.archive()
        let host = ImageHostStandIn(images: Self.images, emojiList: Self.emojiList, token: "xoxp-other")
        let base = try await host.start()
        let report = try await Self.fetch(archive, host: base)
        #expect(report.emojiListed == nil)
        #expect(report.emojiListError?.contains("invalid_auth") == true, "\(report.emojiListError ?? "nil")")
        #expect(report.emoji.total == 0)
        #expect(report.avatars.downloaded == 2)
        #expect(report.notFetched == 2, "cy's avatar and the list")
        await host.stop()
    }

    /// `serve`: avatars and emoji are the workspace's: any signed-in reader gets them, nobody else.
    @Test func serveGivesStoredImagesToAnySignedInReaderOnly() async throws {
        let (archive, _) = try Self.archive()
        let host = ImageHostStandIn(images: Self.images, emojiList: Self.emojiList)
        let base = try await host.start()
        _ = try await Self.fetch(archive, host: base)
        await host.stop()

        let api = SlackAPI(archive: archive)
        let reader = try archive.createToken(userID: "U2").token
        let router = SlackAPIServer.buildRouter(api: api, ui: WebUI())
        func get(_ path: String, token: String?) async throws -> (HTTPResponse.Status, HTTPFields, [UInt8]) {
            try await Application(router: router).test(.router) { client in
                var headers: HTTPFields = [:]
                if let token { headers[.authorization] = "Bearer \(token)" }
                return try await client.execute(uri: path, method: .get, headers: headers) { response in
                    (response.status, response.headers, Array(buffer: response.body))
                }
            }
        }
        let avatar = try await get("/avatars/U1", token: reader)
        #expect(avatar.0 == .ok && avatar.2 == Self.annPNG)
        #expect(avatar.1[.contentType] == "image/png" && avatar.1[.xContentTypeOptions] == "nosniff")
        #expect(avatar.1[.cacheControl] == "private, no-cache")
        let alias = try await get("/emoji/yay", token: reader)
        #expect(alias.0 == .ok && alias.2 == Self.parrotGIF && alias.1[.contentType] == "image/gif")
        // The UI's versioned URL may be kept.
        let versioned = try await get("/emoji/partyparrot?v=" + Self.sha256(Self.parrotGIF).prefix(12), token: reader)
        #expect(versioned.1[.cacheControl] == "private, max-age=31536000, immutable")

        for (path, token) in [
            ("/avatars/U1", nil), ("/avatars/U1", "xoxp-slackindex-" + String(repeating: "A", count: 40)),
            ("/avatars/U3", reader), ("/avatars/U4", reader), ("/avatars/..%2F..%2Fetc%2Fpasswd", reader),
            ("/emoji/evil", reader), ("/emoji/gone", reader), ("/emoji/loop1", reader), ("/emoji/thumbs", reader),
        ] as [(String, String?)] {
            let answer = try await get(path, token: token)
            #expect(answer.0 == .notFound, "\(path) \(token ?? "no token")")
            #expect(answer.2 == Array("No such file.\n".utf8))
        }

        // What the web UI reads to show them.
        let images = await api.call("slackindex.images", parameters: [:], bearer: reader)
        #expect(images.ok)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(images.body.utf8)) as? [String: Any])
        let parrot = "/emoji/partyparrot?v=" + Self.sha256(Self.parrotGIF).prefix(12)
        #expect(object["emoji"] as? [String: String] == ["partyparrot": parrot, "yay": "/emoji/yay?v=" + Self.sha256(Self.parrotGIF).prefix(12)])
        #expect(object["emoji_aliases"] as? [String: String] == ["thumbs": "+1"])
        #expect(
            object["avatars"] as? [String: String] == [
                "U1": "/avatars/U1?v=" + Self.sha256(Self.annPNG).prefix(12),
                "U2": "/avatars/U2?v=" + Self.sha256(Self.boJPEG).prefix(12),
            ])
        let refused = await api.call("slackindex.images", parameters: [:], bearer: "xoxp-nobody")
        #expect(!refused.ok)
    }

    private func counts(
        total: Int, downloaded: Int = 0, alreadyThere: Int = 0, gone: Int = 0, failed: Int = 0, bytes: Int64 = 0
    ) -> ImageFetcher.Counts {
        var c = ImageFetcher.Counts()
        c.total = total
        c.downloaded = downloaded
        c.alreadyThere = alreadyThere
        c.gone = gone
        c.failed = failed
        c.bytes = bytes
        return c
    }
}
