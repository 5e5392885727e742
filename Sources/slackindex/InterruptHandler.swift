import Dispatch
import Foundation
import Synchronization
import SlackIndex

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
/// A process-wide `sigaction` handler writes the signal's number to a pipe, and a thread of ours reads it and runs
/// `action`; the handler is in place when `init` returns. Not a `DispatchSource`: libdispatch installs its own
/// handler only when the source's registration runs on its manager thread, some time after `resume()`, and until
/// then the signal had the `SIG_IGN` a source needs and was lost. On a loaded machine a Ctrl-C 0.1 s after `import`
/// opened its archive went unnoticed: the import ran to its end and exited 0 (`InterruptTests`, flaky before).
///
/// `@unchecked Sendable`: its properties are set once in `init`.
final class SignalWatcher: @unchecked Sendable {
    private let signalNumber: Int32
    private let writeEnd: Int32

    init(_ signalNumber: Int32, action: @escaping @Sendable () -> Void) {
        self.signalNumber = signalNumber
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            // No descriptors left: the signal keeps its default action (Ctrl-C quits at once, losing nothing
            // committed), which is what `cancel()` restores anyway.
            writeEnd = -1
            return
        }
        let readEnd = ends[0]
        writeEnd = ends[1]
        // A flood of signals must not block the handler: past the pipe's 64 KiB, presses are dropped. Neither end
        // goes to the programs we run (pdftotext).
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        signalPipes[Int(signalNumber)] = writeEnd
        var handler = sigaction()
        handler.__sigaction_handler.sa_handler = { signalNumber in
            var byte = UInt8(truncatingIfNeeded: signalNumber)
            _ = write(signalPipes[Int(signalNumber)], &byte, 1)
        }
        handler.sa_flags = SA_RESTART
        sigemptyset(&handler.sa_mask)
        sigaction(signalNumber, &handler, nil)
        let reader = Thread {
            // The signal may be blocked in every other thread (libdispatch's workers block all asynchronous
            // signals, and a program started from one inherits that mask: the tests' subprocesses did, and the
            // handler never ran); unblocked here, it is delivered to this thread at least.
            var only = sigset_t()
            sigemptyset(&only)
            sigaddset(&only, signalNumber)
            pthread_sigmask(SIG_UNBLOCK, &only, nil)
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count == 1 {
                    action()
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break  // the write end was closed: cancelled
                }
            }
            close(readEnd)
        }
        reader.name = "signal \(signalNumber)"
        reader.start()
    }

    /// The signal has its default action again.
    func cancel() {
        signal(signalNumber, SIG_DFL)
        guard writeEnd >= 0 else { return }
        signalPipes[Int(signalNumber)] = -1
        close(writeEnd)
    }
}

/// Each signal's pipe, for the handler (a C function pointer captures nothing): allocated once, before any handler
/// is installed, and only read inside one (an array's accessors are not meant for signal handlers).
private nonisolated(unsafe) let signalPipes: UnsafeMutablePointer<Int32> = {
    let pipes = UnsafeMutablePointer<Int32>.allocate(capacity: 65)
    pipes.initialize(repeating: -1, count: 65)
    return pipes
}()

extension InterruptHandler {
    /// The first Ctrl-C asks `stop` to end an import or a copy after the messages being written, and says so.
    static func stoppingWrites(_ stop: StopSignal) -> InterruptHandler {
        InterruptHandler {
            stop.request()
            Output.error("\nStopping after the messages being written (Ctrl-C again quits at once).")
        }
    }
}
