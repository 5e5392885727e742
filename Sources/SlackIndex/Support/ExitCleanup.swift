import Foundation
import Synchronization

/// Files and folders a process made for itself in the temporary folder (the fuzz targets' fixtures), removed when
/// it exits: a whole `swift test` runs the fuzz loops in-process and left two folders and a zip behind each time.
package enum ExitCleanup {
    private static let paths = Mutex<[String]>([])
    private static let registered = Mutex(false)

    /// Removes `url` (a file or a folder and everything in it) when the process exits normally.
    package static func remove(_ url: URL) {
        paths.withLock { $0.append(url.path) }
        registered.withLock { done in
            guard !done else { return }
            done = true
            atexit { for path in ExitCleanup.paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) } }
        }
    }
}
