import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Import benchmark: imports into a scratch database and reports throughput, memory and time per phase.
package struct ImportBench: Sendable {
    /// The figures.
    package struct Result: Sendable, Codable {
        package var messages: Int
        package var seconds: Double
        package var messagesPerSecond: Double
        package var megabytesPerSecond: Double
        package var peakRSSMB: Double
        package var phases: ImportPhases
        package var databaseBytes: Int64

        private enum CodingKeys: String, CodingKey {
            case messages, seconds, phases
            case messagesPerSecond = "messages_per_second"
            case megabytesPerSecond = "mb_per_second"
            case peakRSSMB = "peak_rss_mb"
            case databaseBytes = "database_bytes"
        }
    }

    package var path: String

    package init(path: String) {
        self.path = path
    }

    /// Imports `path` into a new database in a temporary folder (deleted afterwards).
    package func run(progress: Importer.ProgressHandler? = nil) throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("slackindex-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive = try Archive(path: folder.appendingPathComponent("bench.sqlite").path)
        let summary = try Importer(archive: archive).importExport(at: path, progress: progress)
        return Result(
            messages: summary.messagesRead, seconds: summary.seconds,
            messagesPerSecond: summary.seconds > 0 ? Double(summary.messagesRead) / summary.seconds : 0,
            megabytesPerSecond: summary.seconds > 0 ? Double(summary.bytes) / 1e6 / summary.seconds : 0,
            peakRSSMB: ImportBench.peakRSSMegabytes(), phases: summary.phases, databaseBytes: archive.fileSize)
    }

    /// The process's peak resident set size so far, in MB.
    package static func peakRSSMegabytes() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }
}
