/// The archive served as a Slack-compatible Web API subset (`slackindex serve`).
///
/// `SlackAPI` answers method calls (`conversations.history`, `search.messages`, …) from the archive for a token,
/// with Slack's JSON shapes, error codes and cursor paging; `SlackAPIServer` puts it behind Hummingbird at
/// `/api/{method}` (GET with a query string, POST with a form or JSON body), as Slack's SDKs expect, so
/// `slack_sdk.WebClient(base_url: "http://127.0.0.1:PORT/api/")` works against it. Tokens live in the archive
/// (`Archive.createToken`), stored only as SHA-256 hashes.
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SlackIndex

/// Builds the HTTP side of the API: a Hummingbird router or a whole application.
public enum SlackAPIServer {
    /// The router: `GET` and `POST` `/api/{method}`, after `middleware`.
    ///
    /// `RequestObserver` is outermost: it counts (with `configuration.metrics`) and logs every request, and
    /// `GET /metrics` is routed only when metrics are on.
    /// `middleware` runs before the API handlers, in order (the first is outermost), for every `/api/…` request:
    /// tests use it to inject faults. A middleware may answer without calling `next` (an HTTP 500, or a 429 with
    /// `Retry-After`), or return a response whose body writer writes part of the body and then throws, which
    /// makes the server drop the connection mid-body:
    ///
    /// ```swift
    /// struct Faults: RouterMiddleware {
    ///     typealias Context = ServeRequestContext
    ///     func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
    ///         async throws -> Response
    ///     {
    ///         if request.uri.path.hasSuffix("conversations.history") {
    ///             return Response(
    ///                 status: .tooManyRequests, headers: [.retryAfter: "2"],
    ///                 body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"ok":false,"error":"ratelimited"}"#)))
    ///         }
    ///         if request.uri.path.hasSuffix("users.list") {  // cut the connection after 10 bytes
    ///             return Response(
    ///                 status: .ok, headers: [.contentLength: "1000"],
    ///                 body: ResponseBody { writer in
    ///                     try await writer.write(ByteBuffer(string: #"{"ok":true,"#))
    ///                     throw CancellationError()
    ///                 })
    ///         }
    ///         return try await next(request, context)
    ///     }
    /// }
    /// ```
    /// The API's own rate limit (HTTP 429, `Retry-After`) applies inside, after the middleware. `GET /files/{id}`
    /// serves stored files with the same access rules (`FileRoute`); `GET /avatars/{user id}` and
    /// `GET /emoji/{name}` the workspace's stored avatars and custom emoji to any caller with a valid token.
    /// `ui` adds the web UI (`/`, `/ui/…`) and lets its session cookie stand for a token at `/api/`; nil leaves
    /// both out (`serve --ui off`): `/` answers 404 and cookies are ignored.
    public static func buildRouter(
        api: SlackAPI, ui: WebUI? = nil, middleware: [any MiddlewareProtocol<Request, Response, ServeRequestContext>] = []
    ) -> Router<ServeRequestContext> {
        let router = Router(context: ServeRequestContext.self)
        router.add(middleware: RequestObserver(metrics: api.configuration.metrics))
        for item in middleware { router.add(middleware: item) }
        let handler: @Sendable (Request, ServeRequestContext) async throws -> Response = { request, context in
            try await respond(to: request, context: context, api: api, ui: ui)
        }
        router.get("/api/:method", use: handler)
        router.post("/api/:method", use: handler)
        router.get("/files/:id") { request, context in
            try await FileRoute.respond(to: request, context: context, api: api, ui: ui)
        }
        router.get("/avatars/:id") { request, context in
            try await FileRoute.respondImage(.avatar, to: request, context: context, api: api, ui: ui)
        }
        router.get("/emoji/:id") { request, context in
            try await FileRoute.respondImage(.emoji, to: request, context: context, api: api, ui: ui)
        }
        // The archive is asked off the event loop: a server that does not answer takes up to its connect timeout.
        router.get("/healthz") { _, _ in try await NIOThreadPool.singleton.runIfActive { health(of: api) } }
        if let metrics = api.configuration.metrics {
            router.get("/metrics") { _, _ in
                let text = await metrics.scrape(api: api)
                return Response(
                    status: .ok,
                    headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
            }
        }
        ui?.addRoutes(to: router, api: api)
        return router
    }

    /// A Hummingbird application serving `archive`; run it with `runService()` (stops on SIGINT/SIGTERM) or,
    /// in tests, inside a task you cancel or a `ServiceGroup`.
    ///
    /// - Parameters:
    ///   - host: the address to bind (default loopback).
    ///   - port: the port; 0 picks a free one, reported to `onServerRunning`.
    ///   - ui: the web UI, or nil for the API alone (see `buildRouter`).
    ///   - middleware: runs before the API handlers (see `buildRouter` for fault injection).
    ///   - logger: where Hummingbird and `RequestObserver` log (one line per request at `info`); nil:
    ///     `quietLogger` (warnings and errors on stderr; `$LOG_LEVEL` is not read).
    ///   - onServerRunning: called once the server listens, with the port it is bound to.
    ///
    /// Embedding it in a test, with an admin token:
    /// ```swift
    /// let archive = try Archive(path: path)
    /// let (token, _) = try archive.createToken(userID: "U0123", isAdmin: true)
    /// let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    /// let app = SlackAPIServer.makeApplication(archive: archive, middleware: [Faults()]) { port in
    ///     continuation.yield(port)
    /// }
    /// let server = Task { try await app.run() }
    /// var iterator = ports.makeAsyncIterator()
    /// let port = await iterator.next()!   // http://127.0.0.1:\(port)/api/
    /// … // calls with "Authorization: Bearer \(token)"
    /// server.cancel()
    /// ```
    public static func makeApplication(
        archive: Archive, configuration: SlackAPIConfiguration = SlackAPIConfiguration(),
        host: String = "127.0.0.1", port: Int = 0, ui: WebUI? = WebUI(),
        middleware: [any MiddlewareProtocol<Request, Response, ServeRequestContext>] = [],
        logger: Logger? = nil,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) -> Application<RouterResponder<ServeRequestContext>> {
        let api = SlackAPI(archive: archive, configuration: configuration)
        let router = buildRouter(api: api, ui: ui, middleware: middleware)
        let connections = ConnectionGuard(
            total: configuration.maxConnections, perAddress: configuration.maxConnectionsPerAddress,
            busyIdleTimeout: configuration.busyIdleTimeout)
        return Application(
            router: router,
            // The idle timeout runs from when the connection opens (or its last answer) until a request's head is
            // complete, so it also closes connections that trickle a request in byte by byte.
            // A request head (URL and headers) may take 256 KiB, not NIO's 80 KiB default: a long search query or
            // cursor in a GET URL then gets Slack's JSON answer rather than an empty 400 from the HTTP decoder.
            // Connections are counted by `ConnectionGuard`, which admits every new one at once (closing an idle
            // one to make room), rather than leaving it in the listen backlog behind idle ones.
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [ConnectionGuardHandler(connections)],
                    idleTimeout: TimeAmount(configuration.idleTimeout),
                    httpDecoderConfiguration: .init(
                        maxHeaderFieldSize: SlackAPIServer.maxRequestHead, maxHeaderListSize: SlackAPIServer.maxRequestHead))),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "slackindex"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger ?? quietLogger)
    }

    /// The logger of a server started without one (tests, embedders): warnings and errors on stderr, no line per
    /// request. Hummingbird's own default logs every request at `info`, which buried a CI run's one failure under
    /// 100,000 request lines (only the log's tail is kept).
    static let quietLogger = ServeLogHandler.logger(level: .warning, format: .logfmt) { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Starts a server in this process and returns once it listens: what tests of API clients want.
    ///
    /// ```swift
    /// let server = try await SlackAPIServer.start(archive: archive, middleware: [Faults()])
    /// defer { Task { await server.stop() } }   // or `await server.stop()` at the end
    /// let client = SomeSlackClient(baseURL: server.baseURL, token: token)  // http://127.0.0.1:PORT/api/
    /// ```
    /// - Throws: what binding threw (address in use, bad host).
    public static func start(
        archive: Archive, configuration: SlackAPIConfiguration = SlackAPIConfiguration(), host: String = "127.0.0.1",
        port: Int = 0, ui: WebUI? = WebUI(),
        middleware: [any MiddlewareProtocol<Request, Response, ServeRequestContext>] = [], logger: Logger? = nil
    ) async throws -> RunningSlackAPIServer {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = makeApplication(
            archive: archive, configuration: configuration, host: host, port: port, ui: ui, middleware: middleware,
            logger: logger
        ) { bound in
            continuation.yield(bound)
            continuation.finish()
        }
        // Stopped by a graceful shutdown: cancelling `app.run()` drops connections accepted but not yet served,
        // and NIO traps on their unfinished writers ("Deinited NIOAsyncWriter without calling finish()"), which
        // crashed a test run with 30 connections held open.
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: app.logger))
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next() else {
            try await task.value  // the server stopped before listening: its error
            throw CancellationError()
        }
        let urlHost = host.contains(":") ? "[\(host)]" : host
        return RunningSlackAPIServer(port: bound, baseURL: "http://\(urlHost):\(bound)/api/", group: group, task: task)
    }

    /// The largest request head (request line and headers) read, in bytes.
    static let maxRequestHead = 256 << 10

    /// True for addresses only this machine can reach (`127.x`, `::1`, `localhost`).
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// Who a request is for: its `Authorization: Bearer` token, else its `token` argument, else (when `ui` is on)
    /// its web UI session cookie's token; nil for none.
    static func caller(of request: Request, parameters: [String: String], ui: WebUI?) async -> APICaller? {
        var bearer: String?
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                bearer = parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        let presented = bearer.flatMap { $0.isEmpty ? nil : $0 } ?? parameters["token"].flatMap { $0.isEmpty ? nil : $0 }
        if let presented { return .presented(presented) }
        return await ui?.caller(cookieHeader: request.headers[.cookie])
    }

    /// `GET /healthz`, for load balancers and monitors, without a token: 200 and
    /// `{"ok":true,"backend":"sqlite|postgresql","schema":"…"}` when the archive answers (its newest migration read
    /// from it, on the replica when there is one), with `"replica":{"answers","in_recovery","lag_seconds"}` under
    /// `serve --replica`; else 503 and `{"ok":false,"error":"archive_unreachable"}`. Says nothing of the archive's
    /// contents or location.
    static func health(of api: SlackAPI) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        let backend = Archive.isDatabaseServer(api.archive.path) ? "postgresql" : "sqlite"
        guard let schema = try? api.archive.schemaVersion() else {
            headers[.retryAfter] = "1"
            return Response(
                status: .serviceUnavailable, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"ok":false,"error":"archive_unreachable"}"#)))
        }
        var members: [(String, JSONValue)] = [
            ("ok", .bool(true)), ("backend", .string(backend)), ("schema", .string(schema)),
        ]
        if let replica = api.archive.replicaStatus() {
            members.append(("replica", .object([
                ("answers", .bool(replica.answers)), ("in_recovery", .bool(replica.inRecovery)),
                ("lag_seconds", replica.lagSeconds.map { .double($0) } ?? .null),
            ])))
        }
        let body = JSONValue.object(members).serialized
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    /// Reads the request (query string; form or JSON body for POST), calls the API, writes Slack's answer.
    /// Without a bearer token or `token=`, a web UI session cookie (when `ui` is on) stands for its token. Answers
    /// of 1 KiB or more are gzipped for clients that accept it.
    static func respond(to request: Request, context: ServeRequestContext, api: SlackAPI, ui: WebUI?) async throws
        -> Response
    {
        var request = request
        let method = context.parameters.get("method") ?? ""
        var parameters = APIParameters.form(request.uri.query ?? "")
        if request.method == .post {
            let body = try await request.collectBody(upTo: api.configuration.maxBodyBytes)
            let text = String(buffer: body)
            let type = request.headers[.contentType]?.lowercased() ?? ""
            let fields = type.contains("json") ? APIParameters.json(text) : APIParameters.form(text)
            parameters.merge(fields) { _, body in body }
        }
        let caller = await caller(of: request, parameters: parameters, ui: ui)
        let answer = await api.call(method, parameters: parameters, caller: caller)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .xContentTypeOptions: "nosniff"]
        if let retryAfter = answer.retryAfter { headers[.retryAfter] = String(retryAfter) }
        var body = ByteBuffer(string: answer.body)
        if body.readableBytes >= Gzip.minimumBytes, Gzip.accepted(request.headers[.acceptEncoding]),
            let gzipped = Gzip.compress(Array(answer.body.utf8), level: 1)
        {
            headers[.contentEncoding] = "gzip"
            headers[.vary] = "Accept-Encoding"
            body = ByteBuffer(bytes: gzipped)
        }
        return Response(status: HTTPResponse.Status(code: answer.status), headers: headers, body: ResponseBody(byteBuffer: body))
    }
}

/// The request context of `serve`'s router: Hummingbird's basic one, plus the client's address (for the web UI's
/// sign-in limit per address).
public struct ServeRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's address; nil when the request did not come over the network (router tests).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// A server started by `SlackAPIServer.start`.
public struct RunningSlackAPIServer: Sendable {
    /// The port it listens on.
    public let port: Int
    /// `http://HOST:PORT/api/`: the base URL Slack clients take (`slack_sdk`'s `base_url`).
    public let baseURL: String
    let group: ServiceGroup
    let task: Task<Void, any Error>

    /// Stops the server (a graceful shutdown of its service group: it stops listening, finishes the requests in
    /// flight and closes idle connections) and waits until it has closed.
    /// A client stuck mid-request past `graceSeconds` is cut off (the task is cancelled once the server no longer
    /// accepts, so nothing is left unserved in the accept queue).
    public func stop(graceSeconds: Double = 5) async {
        await group.triggerGracefulShutdown()
        let task = self.task
        let deadline = Task {
            try await Task.sleep(for: .seconds(graceSeconds))
            task.cancel()
        }
        _ = try? await task.value
        deadline.cancel()
    }
}

/// Request arguments as Slack's SDKs send them.
enum APIParameters {
    /// `a=1&b=x+y%21` → ["a": "1", "b": "x y!"]; a repeated name keeps its last value.
    static func form(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            guard !name.isEmpty else { continue }
            out[name] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return out
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// A JSON object's members as text: strings as they are, numbers and booleans written out, arrays of
    /// strings joined with commas (`types`).
    static func json(_ text: String) -> [String: String] {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            return [:]
        }
        var out: [String: String] = [:]
        for (name, value) in object {
            switch value {
            case let string as String: out[name] = string
            case let array as [Any]: out[name] = array.map { "\($0)" }.joined(separator: ",")
            case is NSNull: continue
            case let number as NSNumber: out[name] = number.stringValue  // `true` may read "1": also true here
            default: out[name] = "\(value)"
            }
        }
        return out
    }
}
