import Foundation
import Hummingbird
import Logging

/// The outermost middleware of `serve`: counts each request in `/metrics` (when on) and logs one line for it at
/// `info` (`error` for a 5xx answer or a thrown error), with its route's name, HTTP method, status and duration.
///
/// It never reads the path past its route, the query string, a header or a body: a token (`token=`, the
/// `Authorization` header, the session cookie) and a search's words cannot reach a log line or a label.
/// The duration runs until the handler returns its response: a streamed body (a large file) is still being sent.
struct RequestObserver: RouterMiddleware {
    typealias Context = ServeRequestContext
    let metrics: ServeMetrics?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let started = ContinuousClock.now
        let route = Self.route(of: request.uri.path)
        do {
            let response = try await next(request, context)
            finish(request, context: context, route: route, status: response.status.code, started: started)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            finish(request, context: context, route: route, status: status, started: started, error: error)
            throw error
        }
    }

    private func finish(
        _ request: Request, context: Context, route: String, status: Int, started: ContinuousClock.Instant,
        error: (any Error)? = nil
    ) {
        let duration = started.duration(to: .now)
        metrics?.requestAnswered(route: route, status: status, after: duration)
        let level: Logger.Level = status >= 500 ? .error : .info
        guard context.logger.logLevel <= level else { return }  // the line is not built at the default `notice`
        var metadata: Logger.Metadata = [
            "method": .string(route), "http_method": .string(request.method.rawValue),
            "status": .stringConvertible(status),
            "duration_ms": .string(String(format: "%.3f", Double(duration.components.attoseconds) / 1e15
                + Double(duration.components.seconds) * 1000)),
        ]
        // The error's type only: its description could quote what the client sent.
        if let error, !(error is any HTTPResponseError) { metadata["error"] = .string("\(type(of: error))") }
        context.logger.log(level: level, "request", metadata: metadata)
    }

    /// The name a request is counted and logged under: the API method (`search.messages`; `unknown` for a name
    /// not served, so clients cannot grow the labels), `files`, `avatars`, `emoji`, `healthz`, `metrics`, the web
    /// UI's `ui.page`, `ui.assets`, `ui.signin`, `ui.signout`, or `other` (answered 404).
    static func route(of path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard let first = parts.first else { return "ui.page" }
        switch (first, parts.count) {
        case ("api", 2): return SlackAPI.methods.contains(String(parts[1])) ? String(parts[1]) : "unknown"
        case ("files", 2), ("avatars", 2), ("emoji", 2): return String(first)
        case ("healthz", 1), ("metrics", 1): return String(first)
        case ("ui", 2):
            switch parts[1] {
            case "signin": return "ui.signin"
            case "signout": return "ui.signout"
            default: return "ui.assets"
            }
        default: return "other"
        }
    }
}
