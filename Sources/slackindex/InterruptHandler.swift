import Dispatch
import Foundation
import Synchronization

/// Ctrl-C during a long command (`import`, `sync`): the first press runs `action`, which asks the work to stop
/// where the archive is consistent and report what it saved; a second press quits at once (exit 130), which loses
/// nothing committed either, since every commit is atomic.
final class InterruptHandler: Sendable {
    private let watcher: SignalWatcher

    init(_ action: @escaping @Sendable () -> Void) {
        let presses = Presses()
        watcher = SignalWatcher(SIGINT) {
            if presses.count.add(1, ordering: .relaxed).newValue == 1 {
                action()
            } else {
                Output.error("\nQuitting at once; everything committed so far stays.")
                _exit(ExitStatus.interrupted)
            }
        }
    }

    /// Ctrl-C ends the process again.
    func cancel() {
        watcher.cancel()
    }
}

private final class Presses: Sendable {
    let count = Atomic<Int>(0)
}

/// Runs `action` each time the process receives `signal` (instead of the signal's default action), until
/// cancelled.
///
/// `@unchecked Sendable`: `source` is set once in `init` and only cancelled after.
final class SignalWatcher: @unchecked Sendable {
    private let source: any DispatchSourceSignal
    private let signalNumber: Int32

    init(_ signalNumber: Int32, action: @escaping @Sendable () -> Void) {
        self.signalNumber = signalNumber
        signal(signalNumber, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler(handler: action)
        source.resume()
    }

    /// The signal has its default action again.
    func cancel() {
        source.cancel()
        signal(signalNumber, SIG_DFL)
    }
}
