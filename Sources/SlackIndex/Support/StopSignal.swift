import Synchronization

/// A request to stop long work early and keep what is done (Ctrl-C during `import`): set from any thread, read by
/// the worker between units of work that leave the archive consistent (a batch, a page).
public final class StopSignal: Sendable {
    private let requested = Atomic<Bool>(false)

    public init() {}

    public func request() { requested.store(true, ordering: .relaxed) }

    public var isRequested: Bool { requested.load(ordering: .relaxed) }
}
