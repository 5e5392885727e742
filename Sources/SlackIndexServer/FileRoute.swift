import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import SlackIndex

/// `GET /files/{file id}`: a file fetched by `slackindex files`, for a caller that may read a conversation holding
/// it (a bearer token, `token=`, or a web UI session: the access rules of the messages).
///
/// Everything else (no caller, a token that may not read it, a file never fetched, a blob gone from disk) answers
/// the same 404, so nobody learns which files exist. The path on disk comes from the archive's SHA-256 of the file,
/// never from the request. Images, PDF, audio, video and plain text are shown inline; anything else (HTML, SVG,
/// unknown bytes) only downloads, and every answer carries `nosniff` and a sandboxing CSP. `Range: bytes=…`
/// (one range) answers 206 with the part.
enum FileRoute {
    static func respond(to request: Request, context: ServeRequestContext, api: SlackAPI, ui: WebUI?) async throws
        -> Response
    {
        let id = context.parameters.get("id") ?? ""
        let parameters = APIParameters.form(request.uri.query ?? "")
        let caller: APICaller
        switch await admit(request, parameters: parameters, api: api, ui: ui) {
        case .success(let admitted): caller = admitted
        case .failure(let refusal): return refusal.response
        }
        // `?thumb=1`: the image's thumbnail (`slackindex files` stores Slack's `thumb_480`), to the same readers.
        let thumbnail = parameters["thumb"] == "1"
        let found = try? await NIOThreadPool.singleton.runIfActive { () -> (FileBlob, String?, String)? in
            let token = try api.verifiedToken(caller)
            let store = FileBlobs(archivePath: api.archive.path)
            let visible: (FileBlob, String?)?
            if thumbnail {
                visible = try api.archive.visibleFileThumb(id: id, to: token).flatMap {
                    FileType.isImage($0.contentType) ? ($0, nil) : nil
                }
            } else {
                visible = try api.archive.visibleFileBlob(id: id, to: token)
            }
            guard let (blob, name) = visible, let path = store.path(of: blob.sha256),
                store.contains(blob.sha256, size: blob.size)
            else { return nil }
            return (blob, name, path)
        }
        guard let (blob, name, path) = found ?? nil else { return notFound() }
        return try await serve(blob, name: name, path: path, request: request, context: context)
    }

    /// `GET /avatars/{user id}` and `GET /emoji/{name}`: a member's stored profile image or a stored custom emoji
    /// (an alias answers with its emoji's image). They are the workspace's, not a conversation's: any caller with
    /// a valid token or a web UI session gets them; everyone else, and anything not stored, the same 404.
    static func respondImage(
        _ kind: WorkspaceImage.Kind, to request: Request, context: ServeRequestContext, api: SlackAPI, ui: WebUI?
    ) async throws -> Response {
        let key = context.parameters.get("id") ?? ""
        let parameters = APIParameters.form(request.uri.query ?? "")
        let caller: APICaller
        switch await admit(request, parameters: parameters, api: api, ui: ui) {
        case .success(let admitted): caller = admitted
        case .failure(let refusal): return refusal.response
        }
        let found = try? await NIOThreadPool.singleton.runIfActive { () -> (FileBlob, String)? in
            _ = try api.verifiedToken(caller)
            let store = FileBlobs(archivePath: api.archive.path)
            guard let blob = try api.archive.imageBlob(kind, key: key), FileType.isImage(blob.contentType),
                let path = store.path(of: blob.sha256), store.contains(blob.sha256, size: blob.size)
            else { return nil }
            return (blob, path)
        }
        guard let (blob, path) = found ?? nil else { return notFound() }
        let ext = String(blob.contentType.split(separator: "/").last ?? "img").replacingOccurrences(of: "jpeg", with: "jpg")
        let name = (kind == .avatar ? "avatar-" : "emoji-") + key + "." + ext
        // The web UI asks for `?v=` the blob's first 12 hex digits: that URL's bytes never change.
        let versioned = parameters["v"].map { $0.count >= 12 && blob.sha256.hasPrefix($0) } ?? false
        return try await serve(
            blob, name: name, path: path, request: request, context: context,
            cache: versioned ? "private, max-age=31536000, immutable" : nil)
    }

    /// A refusal before the archive is read: no caller (404) or over the rate limit (429).
    struct Refusal: Error {
        var response: Response
    }

    /// The request's caller (a token or a web UI session), within the API's rate limit.
    private static func admit(
        _ request: Request, parameters: [String: String], api: SlackAPI, ui: WebUI?
    ) async -> Result<APICaller, Refusal> {
        guard let caller = await SlackAPIServer.caller(of: request, parameters: parameters, ui: ui) else {
            return .failure(Refusal(response: notFound()))
        }
        if let wait = await api.limiter.acquire(caller.rateKey) {
            api.configuration.metrics?.rateLimited(.token)
            var response = Response(status: .tooManyRequests, headers: [.xContentTypeOptions: "nosniff"])
            response.headers[.retryAfter] = String(RateLimiter.retryAfter(wait))
            return .failure(Refusal(response: response))
        }
        return .success(caller)
    }

    /// The answer for blob `blob` at `path`: 304 for its ETag, a range when asked, else the whole.
    private static func serve(
        _ blob: FileBlob, name: String?, path: String, request: Request, context: ServeRequestContext,
        cache: String? = nil
    ) async throws -> Response {
        var headers = fileHeaders(blob, name: name)
        if let cache { headers[.cacheControl] = cache }
        let etag = "\"\(blob.sha256)\""
        headers[.eTag] = etag
        if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: headers) }
        let size = Int(blob.size)
        let io = FileIO()
        guard let rangeHeader = request.headers[.range] else {
            headers[.contentLength] = String(size)
            return Response(status: .ok, headers: headers, body: try await io.loadFile(path: path, context: context))
        }
        switch byteRange(rangeHeader, size: size) {
        case .whole:
            headers[.contentLength] = String(size)
            return Response(status: .ok, headers: headers, body: try await io.loadFile(path: path, context: context))
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            headers[.contentLength] = "0"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .part(let range):
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
            headers[.contentLength] = String(range.count)
            return Response(
                status: .partialContent, headers: headers,
                body: try await io.loadFile(path: path, range: range, context: context))
        }
    }

    /// The headers of a file's answer: its type; inline or attachment, with its name (RFC 6266: an ASCII
    /// fallback and the UTF-8 name); no sniffing; no script, frame or plugin even if a browser renders it.
    static func fileHeaders(_ blob: FileBlob, name: String?) -> HTTPFields {
        let inline = FileType.isSafeInline(blob.contentType)
        let base = (name.map { ($0 as NSString).lastPathComponent }).flatMap { $0.isEmpty ? nil : $0 } ?? "file"
        let ascii = String(
            base.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? Character($0) : "_" })
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = base.addingPercentEncoding(withAllowedCharacters: allowed) ?? ascii
        var headers: HTTPFields = [
            .contentType: blob.contentType,
            .contentDisposition: (inline ? "inline" : "attachment") + "; filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)",
            .xContentTypeOptions: "nosniff",
            .contentSecurityPolicy: "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox",
            .cacheControl: "private, no-cache",
            .acceptRanges: "bytes",
        ]
        if let referrer = HTTPField.Name("Referrer-Policy") { headers[referrer] = "no-referrer" }
        return headers
    }

    /// What a `Range` header asks of a file of `size` bytes.
    enum ByteRange: Equatable {
        /// No usable range (several ranges, another unit, garbage): the whole file, as RFC 9110 allows.
        case whole
        case part(ClosedRange<Int>)
        /// A range wholly past the end: 416.
        case unsatisfiable
    }

    /// `bytes=0-99`, `bytes=100-`, `bytes=-100` (the last 100); one range only.
    static func byteRange(_ header: String, size: Int) -> ByteRange {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return .whole }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        let first = parts[0].trimmingCharacters(in: .whitespaces)
        let last = parts[1].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            guard let suffix = Int(last), suffix >= 0 else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - suffix)...(size - 1))
        }
        guard let start = Int(first), start >= 0 else { return .whole }
        guard start < size else { return .unsatisfiable }
        if last.isEmpty { return .part(start...(size - 1)) }
        guard let end = Int(last), end >= start else { return .whole }
        return .part(start...min(end, size - 1))
    }

    static func notFound() -> Response {
        Response(
            status: .notFound, headers: [.contentType: "text/plain; charset=utf-8", .xContentTypeOptions: "nosniff"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: "No such file.\n")))
    }
}
