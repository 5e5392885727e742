import Foundation
import Synchronization

/// A progress line on stderr for the long commands (import, sync, upgrade): rewritten in place on a terminal, a
/// line of its own every 5 s otherwise (`$SLACKINDEX_PROGRESS_SECONDS`, for logs that want more or fewer). A
/// report is due once per interval, the first after one interval, so quick runs print nothing but their summary.
final class StatusLine: Sendable {
    private let enabled: Bool
    private let terminalInterval: Double
    private let state = Mutex((last: Date(), printed: false))

    init(enabled: Bool, terminalInterval: Double = 0.2) {
        self.enabled = enabled
        self.terminalInterval = terminalInterval
    }

    /// Seconds between lines when stderr is not a terminal.
    static let plainInterval: Double = {
        let value = ProcessInfo.processInfo.environment["SLACKINDEX_PROGRESS_SECONDS"].flatMap(Double.init) ?? 5
        return value.isFinite && value >= 0.05 ? value : 5
    }()

    /// True when a report is due now, which then counts as made.
    func due() -> Bool {
        guard enabled else { return false }
        let now = Date()
        return state.withLock { s in
            guard now.timeIntervalSince(s.last) >= (Output.stderrIsTTY ? terminalInterval : Self.plainInterval) else { return false }
            s.last = now
            return true
        }
    }

    /// Shows `terminal` in place of the terminal's line, or writes `plain` (or `terminal`) as a line of its own.
    func show(_ terminal: String, plain: String? = nil) {
        if Output.stderrIsTTY {
            state.withLock { $0.printed = true }
            Output.errorRaw("\r\u{1B}[K" + terminal)
        } else {
            Output.error(plain ?? terminal)
        }
    }

    /// Clears the terminal's line when a report was shown there.
    func finish() {
        if Output.stderrIsTTY, state.withLock({ $0.printed }) { Output.errorRaw("\r\u{1B}[K") }
    }
}
