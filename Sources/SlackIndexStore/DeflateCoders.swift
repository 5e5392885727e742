import CSlackDeflate
import Foundation

/// libdeflate compressors and decompressors kept for reuse instead of allocated per call.
///
/// Allocating one zero-fills its tables: on the 100,000-message export's import (callgrind), a compressor per day file
/// cost 512 M of its 19.5 G instructions (2.6%) and a decompressor per zip entry 183 M (0.9%), both on the reader
/// thread. A coder is used by one caller at a time: `with` takes one out of the pool (or allocates one) and puts it
/// back after `body`; at most `kept` wait in a pool, so the memory held is bounded by how many run at once.
package final class DeflateCoders: @unchecked Sendable {
    /// Decompressors (raw DEFLATE and zlib streams alike).
    package static let decompressors = DeflateCoders(
        allocate: { libdeflate_alloc_decompressor() }, free: { libdeflate_free_decompressor($0) })
    /// Compressors at level 1, as `RawBlocks` packs.
    package static let fastCompressors = DeflateCoders(
        allocate: { libdeflate_alloc_compressor(1) }, free: { libdeflate_free_compressor($0) })

    /// How many idle coders a pool keeps (one per thread that packs or inflates at once is enough).
    static let kept = 4

    // `@unchecked Sendable`: `idle` is only touched under `lock`; a coder handed out is used by one caller only.
    private let lock = NSLock()
    private var idle: [OpaquePointer] = []
    private let allocate: () -> OpaquePointer?
    private let free: (OpaquePointer) -> Void

    init(allocate: @escaping () -> OpaquePointer?, free: @escaping (OpaquePointer) -> Void) {
        self.allocate = allocate
        self.free = free
    }

    /// Runs `body` with a coder of its own, nil when none could be allocated (out of memory).
    package func with<R>(_ body: (OpaquePointer?) throws -> R) rethrows -> R {
        let coder = lock.withLock { idle.popLast() } ?? allocate()
        defer {
            if let coder {
                let surplus: OpaquePointer? = lock.withLock {
                    guard idle.count < Self.kept else { return coder }
                    idle.append(coder)
                    return nil
                }
                if let surplus { free(surplus) }
            }
        }
        return try body(coder)
    }

    /// Coders waiting in the pool (for tests).
    var idleCount: Int { lock.withLock { idle.count } }
}
