import Synchronization

/// The searches that run at once (`slots`, one per search thread) and the searches waiting for one, first come
/// first served: a search past the slots waits up to a deadline instead of being refused at once.
///
/// Measured before it (issue 51): one `serve` over the generated 1M archive, 50 clients each with its own token,
/// refused 56% of the searches with 429 (74% when all 50 searched at once) because searches past 16 in flight were
/// refused whatever their token's rate. A client within its own rate now waits for a slot; past `maxWaiting`
/// searches waiting, or after waiting the deadline, it is told to come back (`SlackAPI.search`: HTTP 503 with
/// `Retry-After`).
final class SearchSlots: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var free: Int
        var waiting: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>
    /// Searches that may wait at once; one more is refused without waiting.
    let maxWaiting: Int

    init(slots: Int, maxWaiting: Int) {
        state = Mutex(State(free: max(1, slots)))
        self.maxWaiting = max(0, maxWaiting)
    }

    /// Takes a slot, waiting up to `deadline` for one. False when none came in time or too many already wait: the
    /// caller then has no slot to give back.
    ///
    /// - Complexity: O(1) when a slot is free; O(w) to give up waiting, for w searches waiting.
    func acquire(waitingAtMost deadline: Duration) async -> Bool {
        let id: UInt64? = state.withLock { state in
            if state.free > 0 {
                state.free -= 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        return await withCheckedContinuation { continuation in
            let queued = state.withLock { state in
                guard state.waiting.count < maxWaiting else { return false }
                // A slot freed since the first look: take it.
                if state.free > 0 {
                    state.free -= 1
                    continuation.resume(returning: true)
                    return true
                }
                state.waiting.append(Waiter(id: id, continuation: continuation))
                return true
            }
            guard queued else { return continuation.resume(returning: false) }
            Task {
                try? await Task.sleep(for: deadline)
                self.giveUp(id)
            }
        }
    }

    /// Gives the slot to the search waiting longest, or frees it.
    func release() {
        let next: Waiter? = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.continuation.resume(returning: true)
    }

    /// Ends the wait of search `id` without a slot, unless it got one meanwhile.
    private func giveUp(_ id: UInt64) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiting.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }

    /// Searches waiting for a slot now.
    var waiting: Int { state.withLock { $0.waiting.count } }
}
