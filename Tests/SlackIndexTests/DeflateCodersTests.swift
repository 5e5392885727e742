import CSlackDeflate
import Foundation
import Synchronization
import Testing

@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// libdeflate coders kept for reuse (`DeflateCoders`): a coder is never handed to two callers at once, is reused
/// instead of allocated again, and no more than `kept` wait idle; every coder allocated is freed or kept.
@Suite struct DeflateCodersTests {
    /// Fake coders (distinct non-null pointers) with counts of what was allocated and freed.
    final class Ledger: Sendable {
        struct Counts {
            var allocated = 0
            var freed: Set<Int> = []
            var inUse: Set<Int> = []
            var overlaps = 0
        }
        let counts = Mutex(Counts())

        func pool() -> DeflateCoders {
            DeflateCoders(
                allocate: { [self] in
                    let number = counts.withLock { counts in
                        counts.allocated += 1
                        return counts.allocated
                    }
                    return OpaquePointer(bitPattern: number * 16)
                },
                free: { [self] coder in _ = counts.withLock { $0.freed.insert(Int(bitPattern: coder)) } })
        }
    }

    @Test func aCoderIsReusedOneCallerAtATime() {
        let ledger = Ledger()
        let pool = ledger.pool()
        let first = pool.with { $0 }
        let second = pool.with { $0 }
        #expect(first != nil && first == second, "the coder put back is the one handed out next")
        #expect(ledger.counts.withLock { $0.allocated } == 1)
        // Nested: the inner caller gets another coder; both go back to the pool.
        pool.with { outer in
            pool.with { inner in #expect(inner != outer) }
        }
        #expect(ledger.counts.withLock { $0.allocated } == 2)
        #expect(pool.idleCount == 2)
    }

    @Test func concurrentCallersNeverShareACoderAndTheIdleAreBounded() {
        let ledger = Ledger()
        let pool = ledger.pool()
        DispatchQueue.concurrentPerform(iterations: 2_000) { index in
            pool.with { coder in
                guard let coder else { return }
                let key = Int(bitPattern: coder)
                ledger.counts.withLock { counts in
                    if !counts.inUse.insert(key).inserted { counts.overlaps += 1 }
                }
                if index % 7 == 0 { usleep(50) }
                _ = ledger.counts.withLock { $0.inUse.remove(key) }
            }
        }
        let counts = ledger.counts.withLock { $0 }
        #expect(counts.overlaps == 0, "a coder was handed to two callers at once")
        #expect(pool.idleCount <= DeflateCoders.kept)
        // Every coder allocated is either idle in the pool or freed, never both.
        #expect(counts.allocated == pool.idleCount + counts.freed.count)
        #expect(counts.allocated >= 1)
    }

    @Test func noCoderIsHandedOutAsNilAndTheCallerDecides() {
        let pool = DeflateCoders(allocate: { nil }, free: { _ in Issue.record("nothing to free") })
        #expect(pool.with { $0 == nil })
        #expect(pool.idleCount == 0)
    }

    /// The real pools: what one packs, the other reads back (the same coders serve zip entries and blocks).
    @Test func theSharedPoolsPackAndInflate() throws {
        var blocks: [[UInt8]] = []
        let raws = (0..<50).map { #"{"type":"message","text":"hello \#($0)"}"# }
        let locations = RawBlocks.pack(raws, into: &blocks)
        for _ in 0..<3 {
            for (raw, location) in zip(raws, locations) {
                let location = try #require(location)
                let text = try #require(RawBlocks.inflate(blocks[location.block]))
                #expect(RawBlocks.slice(text, location) == raw)
            }
        }
        #expect(DeflateCoders.decompressors.idleCount >= 1 && DeflateCoders.fastCompressors.idleCount >= 1)
    }
}
