import Foundation

/// Values one thread is done with, released by another: the import's writer hands each batch it has written back
/// to the reader thread, which allocated its messages, to free them there.
///
/// The writer bounds the import and the reader has time to spare. Freeing a batch's messages (their strings,
/// arrays and packed blocks) on the writer took ~3% of its samples, and more in contention: memory the reader
/// allocated lives in the reader's malloc arena, so each free on the writer takes that arena's lock while the
/// reader allocates from it (our reading of glibc, not measured apart). Measured on the 1M import, interleaved with
/// the writer freeing its batches: on a busy VM (a fuzzer beside) 23.55, 21.28, 23.27 s against 27.33, 24.07,
/// 26.69 s; on a quieter one 20.16, 21.15, 21.46 s against 24.78, 20.86, 22.86 s (within noise); 3M 81.75 against
/// 88.81 s; the same peak RSS (98–100 MB).
///
/// `@unchecked Sendable`: `values` is only touched while holding `lock` (a lock, not a `Mutex`: `add` moves its
/// argument into the array, which a closure cannot do).
final class DeferredRelease<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Element] = []

    /// Keeps `value` until the next `releaseAll()`. Consumed: pass the caller's last reference (`consume value`) so
    /// that the values are freed by `releaseAll`'s thread, not by the caller's dropping its copy afterwards.
    /// - Complexity: O(1) amortized.
    func add(_ value: consuming Element) {
        lock.lock()
        values.append(consume value)
        lock.unlock()
    }

    /// Releases the values added so far on the calling thread, outside the lock (`add` does not wait for it).
    /// - Complexity: O(n) in the values released.
    func releaseAll() {
        var taken: [Element] = []
        lock.lock()
        swap(&taken, &values)
        lock.unlock()
        taken.removeAll()
    }

    /// How many values wait to be released.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return values.count
    }
}
