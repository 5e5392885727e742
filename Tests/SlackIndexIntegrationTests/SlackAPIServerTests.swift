import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import SlackIndex
import SlackIndexServer
import Testing
@testable import SlackIndexTestSupport

/// The API over HTTP: routes, how arguments and tokens arrive, 429 headers, and middleware that injects faults.
@Suite struct SlackAPIServerTests {
    static func json(_ buffer: ByteBuffer) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: buffer).utf8)) as? [String: Any])
    }

    @Test func getAndPostArgumentsAndTokens() async throws {
        let f = try APIFixture()
        let channel = try APIFixture.conversationID(folder: "general")
        let expected = try APIFixture.exportHistory(folder: "general")
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api))
        try await app.test(.router) { client in
            // GET, query string, bearer token.
            try await client.execute(
                uri: "/api/conversations.history?channel=\(channel)&limit=3", method: .get,
                headers: [.authorization: "Bearer \(f.admin)"]
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                let body = try Self.json(response.body)
                #expect(((body["messages"] as? [[String: Any]]) ?? []).compactMap { $0["ts"] as? String }
                    == Array(expected.prefix(3)))
            }
            // POST form body with the token as a parameter (and a percent-encoded ts).
            let form = "token=\(f.admin)&channel=\(channel)&limit=2&latest=\(expected[5].replacingOccurrences(of: ".", with: "%2E"))"
            try await client.execute(
                uri: "/api/conversations.history", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: form)
            ) { response in
                let body = try Self.json(response.body)
                #expect(((body["messages"] as? [[String: Any]]) ?? []).compactMap { $0["ts"] as? String }
                    == Array(expected[6...7]))
            }
            // POST JSON body, numbers and booleans as JSON values.
            let json = #"{"channel": "\#(channel)", "limit": 2, "latest": "\#(expected[5])", "inclusive": true}"#
            try await client.execute(
                uri: "/api/conversations.history", method: .post,
                headers: [.contentType: "application/json; charset=utf-8", .authorization: "Bearer \(f.admin)"],
                body: ByteBuffer(string: json)
            ) { response in
                let body = try Self.json(response.body)
                #expect(((body["messages"] as? [[String: Any]]) ?? []).compactMap { $0["ts"] as? String }
                    == Array(expected[5...6]))
            }
            // Slack's errors come with HTTP 200.
            try await client.execute(uri: "/api/auth.test", method: .get) { response in
                #expect(response.status == .ok)
                let error = try Self.json(response.body)["error"] as? String
                #expect(error == "not_authed")
            }
            try await client.execute(uri: "/api/nope.nope", method: .post, headers: [.authorization: "Bearer \(f.admin)"]) {
                response in
                let error = try Self.json(response.body)["error"] as? String
                #expect(error == "unknown_method")
            }
            // search.messages with a query in Slack syntax, percent-encoded.
            try await client.execute(
                uri: "/api/search.messages?query=exception%20in%3A%23general&count=3", method: .get,
                headers: [.authorization: "Bearer \(f.admin)"]
            ) { response in
                let body = try Self.json(response.body)
                let matches = ((body["messages"] as? [String: Any])?["matches"] as? [[String: Any]]) ?? []
                #expect(!matches.isEmpty)
                #expect(matches.allSatisfy { ($0["channel"] as? [String: Any])?["name"] as? String == "general" })
            }
        }
    }

    @Test func rateLimitedRequestsGet429AndRetryAfter() async throws {
        let time = ManualTime()
        let f = try APIFixture(rateLimit: RateLimit(requests: 2, interval: .seconds(30)), now: time.now)
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api))
        try await app.test(.router) { client in
            for _ in 0..<2 {
                try await client.execute(uri: "/api/auth.test", method: .get, headers: [.authorization: "Bearer \(f.admin)"]) {
                    #expect($0.status == .ok)
                }
            }
            try await client.execute(uri: "/api/auth.test", method: .get, headers: [.authorization: "Bearer \(f.admin)"]) {
                response in
                #expect(response.status == .tooManyRequests)
                #expect(response.headers[.retryAfter] == "15")
                let error = try Self.json(response.body)["error"] as? String
                #expect(error == "ratelimited")
            }
            time.advance(by: .seconds(15))
            try await client.execute(uri: "/api/auth.test", method: .get, headers: [.authorization: "Bearer \(f.admin)"]) {
                #expect($0.status == .ok)
            }
        }
    }

    /// Faults a client under test must survive, injected before the API handlers.
    struct Faults: RouterMiddleware {
        typealias Context = ServeRequestContext

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
            async throws -> Response
        {
            let path = request.uri.path
            if path.hasSuffix("/users.list") {
                return Response(
                    status: .tooManyRequests, headers: [.retryAfter: "7"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"ok":false,"error":"ratelimited"}"#)))
            }
            if path.hasSuffix("/conversations.list") {
                return Response(status: .internalServerError)
            }
            if path.hasSuffix("/conversations.history") {
                return Response(
                    status: .ok, headers: [.contentLength: "1000", .contentType: "application/json"],
                    body: ResponseBody { writer in
                        try await writer.write(ByteBuffer(string: #"{"ok":true,"messages":["#))
                        throw CancellationError()
                    })
            }
            return try await next(request, context)
        }
    }

    @Test func embeddedServerReportsItsPortAndMiddlewareInjectsFaults() async throws {
        let f = try APIFixture()
        let server = try await SlackAPIServer.start(archive: f.archive, middleware: [Faults()])
        #expect(server.port > 0 && server.baseURL == "http://127.0.0.1:\(server.port)/api/")
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            func get(_ method: String) async throws -> (HTTPClientResponse, String) {
                var request = HTTPClientRequest(url: server.baseURL + method)
                request.headers.add(name: "Authorization", value: "Bearer \(f.admin)")
                let response = try await http.execute(request, timeout: .seconds(10))
                let body = try await response.body.collect(upTo: 1 << 20)
                return (response, String(buffer: body))
            }
            let (ok, okBody) = try await get("auth.test")
            #expect(ok.status == .ok && okBody.contains(#""ok":true"#))
            let (limited, _) = try await get("users.list")
            #expect(limited.status == .tooManyRequests && limited.headers["Retry-After"] == ["7"])
            let (failed, _) = try await get("conversations.list")
            #expect(failed.status == .internalServerError)
            await #expect(throws: (any Error).self) { _ = try await get("conversations.history") }
            // The server goes on after a dropped connection.
            let (again, _) = try await get("auth.test")
            #expect(again.status == .ok)
        } catch {
            try? await http.shutdown()
            await server.stop()
            throw error
        }
        try await http.shutdown()
        await server.stop()
    }
}
