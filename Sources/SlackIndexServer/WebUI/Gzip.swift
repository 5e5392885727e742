import Foundation
import CSlackZlib

/// gzip (RFC 1952) through the system zlib: what the web UI's assets and the API's answers are sent as when the
/// client accepts it.
enum Gzip {
    /// Bodies smaller than this are sent as they are (the header costs more than it saves).
    static let minimumBytes = 1024

    /// `bytes` gzipped at `level` (1 fast … 9 small), or nil if zlib fails.
    ///
    /// - Complexity: O(n).
    static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
        guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 32)
        // zlib only reads through next_in (its C type is not const): the bytes are lent, not copied.
        let status = bytes.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress.map { UnsafeMutablePointer(mutating: $0) }
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// True when an `Accept-Encoding` header value accepts gzip (`gzip`, `gzip;q=0.5`, `*`; not `gzip;q=0`).
    static func accepted(_ header: String?) -> Bool {
        guard let header else { return false }
        return header.lowercased().split(separator: ",").contains { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first == "gzip" || parts.first == "*" else { return false }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
    }
}
