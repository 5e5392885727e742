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
        guard let caller = SlackAPIServer.caller(of: request, parameters: parameters, ui: ui)
        else { return notFound() }
        if let wait = await api.limiter.acquire(caller.rateKey) {
            var response = Response(status: .tooManyRequests, headers: [.xContentTypeOptions: "nosniff"])
            response.headers[.retryAfter] = String(RateLimiter.retryAfter(wait))
            return response
        }
        let found = try? await NIOThreadPool.singleton.runIfActive { () -> (FileBlob, String?, String)? in
            let token = try api.verifiedToken(caller)
            guard let (blob, name) = try api.archive.visibleFileBlob(id: id, to: token),
                let path = FileBlobs(archivePath: api.archive.path).path(of: blob.sha256),
                FileBlobs(archivePath: api.archive.path).contains(blob.sha256, size: blob.size)
            else { return nil }
            return (blob, name, path)
        }
        guard let (blob, name, path) = found ?? nil else { return notFound() }
        var headers = fileHeaders(blob, name: name)
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
