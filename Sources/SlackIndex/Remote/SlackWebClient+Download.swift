import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SlackIndexStore
import Synchronization

extension SlackWebClient {
    /// How a file download ended.
    enum Download {
        /// All the bytes are in `blob` (not committed yet); `contentType` is the server's `Content-Type`.
        case complete(BlobWriter, contentType: String?)
        /// An HTTP status no retry fixes: 404 and 410 (gone), 401 and 403 (refused), a redirect, any other 4xx.
        case status(Int)
        /// The file is larger than the cap (by its `Content-Length`, or by what arrived): nothing kept.
        case tooLarge
    }

    /// Fetches `url` (a file's `url_private_download` or `url_private`) into a new blob of `store`, with the
    /// same rules as ``call(_:_:)``: 429 waits exactly `Retry-After`; 5xx, dropped connections (also half way
    /// through the body) and timeouts are retried with backoff, each attempt into a fresh blob. The token goes in
    /// `Authorization: Bearer` only when `authorized` (the caller checks the host); redirects are not followed.
    ///
    /// - Parameter label: names the file in errors (its id), never the URL.
    /// - Throws: ``RemoteError/unavailable(method:attempts:last:)`` after the last attempt,
    ///   ``RemoteError/rateLimited(method:retryAfter:)`` for a longer wait than the policy allows,
    ///   `FileStoreError` when the blob cannot be written (a full disk: not retried), `CancellationError`.
    func download(_ url: String, label: String, authorized: Bool, maxBytes: Int64, into store: FileBlobs)
        async throws -> Download
    {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        if authorized { request.headers.add(name: "Authorization", value: "Bearer " + token) }
        var failures = 0
        var lastFailure = ""
        // The whole body may take a while: the read timeout (60 s without a byte) catches stalls.
        let deadline = TimeAmount.seconds(max(Int64(policy.requestTimeout.seconds), 3_600))
        while true {
            try Task.checkCancellation()
            counters.withLock { $0.requests += 1 }
            do {
                let response = try await http.execute(request, timeout: deadline)
                let status = Int(response.status.code)
                if status == 429 {
                    counters.withLock { $0.rateLimited += 1 }
                    let seconds = Self.retryAfter(response.headers)
                    guard seconds <= policy.maxRetryAfter else {
                        throw RemoteError.rateLimited(method: label, retryAfter: seconds)
                    }
                    try await wait(.seconds(seconds))
                    continue
                }
                if status >= 500 {
                    throw DownloadRetry(reason: "HTTP \(status)")
                }
                if status != 200 { return .status(status) }
                if let length = response.headers.first(name: "Content-Length").flatMap({ Int64($0) }),
                    length > maxBytes
                {
                    return .tooLarge
                }
                let blob = try store.begin()
                do {
                    for try await buffer in response.body {
                        try buffer.withUnsafeReadableBytes { try blob.write($0) }
                        counters.withLock { $0.bytes += Int64(buffer.readableBytes) }
                        if blob.size > maxBytes {
                            blob.discard()
                            return .tooLarge
                        }
                    }
                } catch {
                    blob.discard()
                    throw error
                }
                return .complete(blob, contentType: response.headers.first(name: "Content-Type"))
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as FileStoreError {
                throw error
            } catch let error as RemoteError {
                throw error
            } catch {
                failures += 1
                lastFailure = (error as? DownloadRetry)?.reason ?? Self.describe(error)
                counters.withLock { $0.failures += 1 }
            }
            guard failures < policy.maxAttempts else {
                throw RemoteError.unavailable(method: label, attempts: failures, last: lastFailure)
            }
            try await wait(backoff(after: failures))
        }
    }

    /// A failure worth another attempt.
    private struct DownloadRetry: Error {
        var reason: String
    }
}
