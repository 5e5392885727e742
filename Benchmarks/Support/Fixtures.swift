import Foundation
import SlackIndex
import Synchronization

/// Why a benchmark fixture could not be built; `description` says what to do about it.
public enum FixtureError: Error, CustomStringConvertible {
    case generatorMissing(tried: [String])
    case generatorFailed(command: String, status: Int32, stderr: String)
    case noConversation

    public var description: String {
        switch self {
        case .generatorMissing(let tried):
            """
            The export generator gen-export was not found (tried: \(tried.joined(separator: ", "))). \
            Set SLACKINDEX_GEN_EXPORT to its path, or check out the shared/ folder beside the repository \
            (Benchmarks/../../shared/tools/gen-export).
            """
        case .generatorFailed(let command, let status, let stderr):
            "gen-export failed with status \(status): \(command)\n\(stderr)"
        case .noConversation:
            "The generated archive has no conversation with at least one page of messages."
        }
    }
}

/// Test data for the suites: generated exports and imported archives, built in setup (never in the timed part).
///
/// Every benchmark runs in its own process, so both are cached on disk under `$SLACKINDEX_BENCH_CACHE` (default
/// `$TMPDIR/slackindex-benchmarks`): the export zip by generator arguments and generator file, the archive by the
/// export and the benchmark executable (any rebuild of the library re-imports). Deleting the folder is always safe.
public enum Fixtures {
    /// The fixed seed of every generated export.
    public static let seed = 42

    /// The cache folder.
    public static var cacheDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["SLACKINDEX_BENCH_CACHE"], !path.isEmpty {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent("slackindex-benchmarks", isDirectory: true)
    }

    /// The export generator: `$SLACKINDEX_GEN_EXPORT`, else `../../shared/tools/gen-export` from this package.
    ///
    /// - Throws: `FixtureError.generatorMissing` with every path tried.
    public static func generatorPath() throws -> String {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment["SLACKINDEX_GEN_EXPORT"], !path.isEmpty {
            candidates.append(path)
        }
        // This file is Benchmarks/Support/Fixtures.swift; the shared checkout sits beside the repository.
        let benchmarksFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(benchmarksFolder.appendingPathComponent("../../shared/tools/gen-export").standardized.path)
        candidates.append(
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
                .appendingPathComponent("../../shared/tools/gen-export").standardized.path)
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return found
        }
        throw FixtureError.generatorMissing(tried: candidates)
    }

    /// A generated Slack export zip with `messages` messages (seed ``seed``), made once and cached.
    ///
    /// - Throws: `FixtureError` when the generator is missing or fails.
    public static func exportZip(messages: Int) throws -> String {
        try lock.withLock { _ in
            let generator = try generatorPath()
            let key = "export-\(messages)-seed\(seed)-\(fileStamp(generator))"
            let zip = cacheDirectory.appendingPathComponent(key + ".zip")
            if FileManager.default.fileExists(atPath: zip.path) { return zip.path }
            try FileManager.default.createDirectory(at: cacheDirectory, withIntermediateDirectories: true)
            prune(prefix: "export-\(messages)-seed\(seed)-", keeping: zip.lastPathComponent)
            let work = cacheDirectory.appendingPathComponent("partial-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: work) }
            let arguments = [
                "--out", work.appendingPathComponent("ws").path, "--messages", String(messages), "--seed", String(seed),
                "--zip", "--quiet",
            ]
            let process = Process()
            process.executableURL = URL(fileURLWithPath: generator)
            process.arguments = arguments
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            let stderr = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw FixtureError.generatorFailed(
                    command: ([generator] + arguments).joined(separator: " "), status: process.terminationStatus,
                    stderr: String(decoding: stderr, as: UTF8.self))
            }
            try FileManager.default.moveItem(at: work.appendingPathComponent("ws.zip"), to: zip)
            return zip.path
        }
    }

    /// The generated export of `messages` messages imported into an archive, made once per build and cached; the
    /// same `Archive` instance for the whole process.
    ///
    /// - Throws: `FixtureError`, or the importer's and store's errors.
    public static func archive(messages: Int) throws -> Archive {
        let zip = try exportZip(messages: messages)
        return try lock.withLock { archives in
            if let archive = archives[messages] { return archive }
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            let prefix = "archive-\(executable.lastPathComponent)-\(messages)-"
            let key = prefix + "\(fileStamp(zip))-\(fileStamp(executable.path))"
            let folder = cacheDirectory.appendingPathComponent(key, isDirectory: true)
            if !FileManager.default.fileExists(atPath: folder.path) {
                prune(prefix: prefix, keeping: key)
                let work = cacheDirectory.appendingPathComponent("partial-\(UUID().uuidString)", isDirectory: true)
                defer { try? FileManager.default.removeItem(at: work) }
                do {
                    // Released (and checkpointed) before the folder is moved into place.
                    let archive = try Archive(path: work.appendingPathComponent("archive.sqlite").path)
                    _ = try Importer(archive: archive).importExport(at: zip)
                }
                try FileManager.default.moveItem(at: work, to: folder)
            }
            let archive = try Archive(path: folder.appendingPathComponent("archive.sqlite").path)
            archives[messages] = archive
            return archive
        }
    }

    /// A new empty folder for scratch archives; the caller removes it.
    public static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "slackindex-bench-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static let lock = Mutex<[Int: Archive]>([:])

    /// Size and modification time of a file, so a changed generator or binary misses the cache.
    private static func fileStamp(_ path: String) -> String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "\(size)-\(Int64(modified))"
    }

    /// Removes older cache entries of the same kind.
    private static func prune(prefix: String, keeping name: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory.path)) ?? []
        for old in names where old.hasPrefix(prefix) && old != name {
            try? FileManager.default.removeItem(at: cacheDirectory.appendingPathComponent(old))
        }
    }
}

/// A value made in a benchmark's setup and read by its body: setup and body run one after the other in the
/// benchmark's process, the lock only makes that visible to the compiler.
public final class SetupValue<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)

    public init() {}

    /// Stores the value (from a setup closure).
    public func set(_ value: Value) {
        storage.withLock { $0 = value }
    }

    /// The value stored by setup; stops the benchmark with a clear message when setup did not run.
    public var value: Value {
        guard let value = storage.withLock({ $0 }) else {
            fatalError("The benchmark's setup did not store its data.")
        }
        return value
    }
}
