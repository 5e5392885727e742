import Dispatch
import Foundation
import Synchronization

/// Ctrl-C during a long command (`import`, `sync`): the first press runs `action`, which asks the work to stop
/// where the archive is consistent and report what it saved; a second press quits at once (exit 130), which loses
/// nothing committed either, since every commit is atomic.
///
/// `@unchecked Sendable`: `source` is set once in `init` and only cancelled after.
final class InterruptHandler: @unchecked Sendable {
    private let source: any DispatchSourceSignal

    init(_ action: @escaping @Sendable () -> Void) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let presses = Presses()
        source.setEventHandler {
            if presses.count.add(1, ordering: .relaxed).newValue == 1 {
                action()
            } else {
                Output.error("\nQuitting at once; everything committed so far stays.")
                _exit(ExitStatus.interrupted)
            }
        }
        source.resume()
    }

    /// Ctrl-C ends the process again.
    func cancel() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}

private final class Presses: Sendable {
    let count = Atomic<Int>(0)
}
