import Foundation
@_spi(Benchmarks) @testable import SlackIndex

/// Paths, temporary folders and tiny export builders shared by the tests.
/// The day the query tests treat as "today".
let queryTestToday = Day(year: 2024, month: 6, day: 15) ?? Day.earliest

enum TestSupport {
    /// A day file of one well-formed message (the malformed-input tests' control).
    static let goodDayFile = #"[{"type":"message","user":"U1","text":"fine words","ts":"1700000000.000100"}]"#

    /// The repository's root (two levels above this file's folder, Tests/SlackIndexTestSupport).
    static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let sampleData = root.appendingPathComponent("sample-data")
    static let sampleFolder = sampleData.appendingPathComponent("export").path
    static let sampleZip = sampleData.appendingPathComponent("export.zip").path
    static let samplePages = sampleData.appendingPathComponent("pages").path

    /// The generator's summary of sample-data (counts the tests compare against).
    static var sampleSummary: [String: Any] {
        let data = (try? Data(contentsOf: sampleData.appendingPathComponent("summary.json"))) ?? Data()
        return ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any]) ?? [:]
    }

    /// A fresh temporary folder, inside this process's own folder (`processFolder`), which goes when the process
    /// exits.
    static func temporaryDirectory() -> URL {
        let url = processFolder.appendingPathComponent(UUID().uuidString, isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `slackindex-tests-PID` in the system's temporary folder: every test's folders, removed at exit. One
    /// `swift test` used to leave ~2,300 folders and up to 2 GB behind; 20,000 of them filled this machine's shared
    /// disk until a CI run's link failed for want of space. The process holds a lock on `.lock` inside it while it
    /// runs; a folder whose lock is free belonged to a process that died without exiting (a crash, a kill) and is
    /// removed by the next test process (a process of another PID namespace sharing /tmp holds its lock too).
    static let processFolder: URL = {
        let temporary = FileManager.default.temporaryDirectory
        removeFoldersOfDeadProcesses(in: temporary)
        let folder = temporary.appendingPathComponent("slackindex-tests-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Reachable by the tests that run a command as another user (setpriv), whatever the umask.
        chmod(folder.path, 0o755)
        let lock = open(folder.appendingPathComponent(".lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if lock >= 0 { _ = flock(lock, LOCK_EX | LOCK_NB) }  // held until the process ends: never closed
        processFolderPath = folder.path
        atexit { if let path = TestSupport.processFolderPath { try? FileManager.default.removeItem(atPath: path) } }
        return folder
    }()

    /// `processFolder`'s path for the exit handler, which cannot capture (a C function pointer).
    nonisolated(unsafe) private static var processFolderPath: String?

    /// Removes `slackindex-tests-PID` folders whose process no longer holds their lock.
    private static func removeFoldersOfDeadProcesses(in temporary: URL) {
        let prefix = "slackindex-tests-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            let folder = temporary.appendingPathComponent(name)
            let lock = open(folder.appendingPathComponent(".lock").path, O_RDWR | O_CLOEXEC)
            guard lock >= 0 else { continue }  // no lock file: made just now, or not ours
            defer { close(lock) }
            if flock(lock, LOCK_EX | LOCK_NB) == 0 { try? FileManager.default.removeItem(at: folder) }
        }
    }

    /// A new empty archive in a temporary folder.
    static func makeArchive() throws -> Archive {
        try Archive(path: temporaryDirectory().appendingPathComponent("archive.sqlite").path)
    }

    /// An archive with sample-data's folder imported once (shared read-only fixture per call).
    static func sampleArchive() throws -> Archive {
        let archive = try makeArchive()
        _ = try Importer(archive: archive).importExport(at: sampleFolder)
        return archive
    }

    /// Writes an export folder from `relative path → file contents`.
    @discardableResult
    static func writeExport(_ files: [String: String], in folder: URL? = nil) throws -> URL {
        let root = folder ?? temporaryDirectory().appendingPathComponent("export")
        for (path, contents) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: url)
        }
        return root
    }

    /// The smallest valid export: one user, one channel, and the given day files of `general`.
    static func minimalExport(days: [String: String], extra: [String: String] = [:]) throws -> URL {
        var files: [String: String] = [
            "users.json": #"[{"id": "U1", "name": "ann", "real_name": "Ann Lee", "team_id": "T1"}]"#,
            "channels.json": #"[{"id": "C1", "name": "general", "created": "1433558319", "members": ["U1"]}]"#,
        ]
        for (day, contents) in days { files["general/\(day).json"] = contents }
        files.merge(extra) { _, new in new }
        return try writeExport(files)
    }
}

/// Writes a stored (uncompressed) zip by hand, so tests control the name bytes and the UTF-8 flag exactly.
struct ZipWriter {
    private var body = Data()
    private var central = Data()
    private var count: UInt16 = 0
    /// Write ZIP64 structures: 0xFFFFFFFF sizes and offsets with the values in extra fields, and the ZIP64 end of
    /// central directory record and locator.
    var zip64 = false

    /// Adds a file whose name is the given bytes; `utf8Flag` sets general-purpose bit 11; `flags` adds other bits
    /// (1: encrypted); `method` is written as is (the contents are always stored).
    mutating func add(nameBytes: [UInt8], contents: Data, utf8Flag: Bool, flags: UInt16 = 0, method: UInt16 = 0) {
        let crc = ZipWriter.crc32(contents)
        let flag: UInt16 = (utf8Flag ? 0x0800 : 0) | flags
        let offset = UInt32(body.count)
        var local = Data()
        local.append(le32(0x0403_4b50))
        local.append(le16(20))
        local.append(le16(flag))
        local.append(le16(method))
        local.append(le16(0))
        local.append(le16(0))
        local.append(le32(crc))
        local.append(le32(UInt32(contents.count)))
        local.append(le32(UInt32(contents.count)))
        local.append(le16(UInt16(nameBytes.count)))
        local.append(le16(0))
        local.append(contentsOf: nameBytes)
        body.append(local)
        body.append(contents)
        var extra = Data()
        if zip64 {
            extra.append(le16(1))
            extra.append(le16(24))
            for value in [UInt64(contents.count), UInt64(contents.count), UInt64(offset)] {
                extra.append(le32(UInt32(value & 0xffff_ffff)))
                extra.append(le32(UInt32(value >> 32)))
            }
        }
        let size = zip64 ? 0xffff_ffff : UInt32(contents.count)
        var entry = Data()
        entry.append(le32(0x0201_4b50))
        entry.append(le16(45))
        entry.append(le16(45))
        entry.append(le16(flag))
        entry.append(le16(method))
        entry.append(le16(0))
        entry.append(le16(0))
        entry.append(le32(crc))
        entry.append(le32(size))
        entry.append(le32(size))
        entry.append(le16(UInt16(nameBytes.count)))
        entry.append(le16(UInt16(extra.count)))
        entry.append(le16(0))
        entry.append(le16(0))
        entry.append(le16(0))
        entry.append(le32(0))
        entry.append(le32(zip64 ? 0xffff_ffff : offset))
        entry.append(contentsOf: nameBytes)
        entry.append(extra)
        central.append(entry)
        count += 1
    }

    /// Adds a file with a UTF-8 name.
    mutating func add(_ name: String, _ contents: String, utf8Flag: Bool = true) {
        add(nameBytes: Array(name.utf8), contents: Data(contents.utf8), utf8Flag: utf8Flag)
    }

    /// The finished zip file.
    func data() -> Data {
        var out = body
        let centralOffset = UInt32(out.count)
        out.append(central)
        if zip64 {
            let recordOffset = UInt32(out.count)
            out.append(le32(0x0606_4b50))
            out.append(le32(44))
            out.append(le32(0))  // size of record, high half
            out.append(le16(45))
            out.append(le16(45))
            out.append(le32(0))
            out.append(le32(0))
            for value in [UInt32(count), 0, UInt32(count), 0, UInt32(central.count), 0, centralOffset, 0] {
                out.append(le32(value))
            }
            out.append(le32(0x0706_4b50))
            out.append(le32(0))
            out.append(le32(recordOffset))
            out.append(le32(0))
            out.append(le32(1))
        }
        out.append(le32(0x0605_4b50))
        out.append(le16(0))
        out.append(le16(0))
        out.append(le16(zip64 ? 0xffff : count))
        out.append(le16(zip64 ? 0xffff : count))
        out.append(le32(zip64 ? 0xffff_ffff : UInt32(central.count)))
        out.append(le32(zip64 ? 0xffff_ffff : centralOffset))
        out.append(le16(0))
        return out
    }

    private func le16(_ v: UInt16) -> Data { Data([UInt8(v & 0xff), UInt8(v >> 8)]) }
    private func le32(_ v: UInt32) -> Data { Data((0..<4).map { UInt8((v >> (8 * $0)) & 0xff) }) }

    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xedb8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }
}

/// Runs tasks on one thread of its own instead of the cooperative pool (and Dispatch's width-limited queues),
/// which parallel tests keep busy with blocking SQLite work: timing tests (deadlines) run their tasks here so they
/// measure the code, not the pools' backlog.
///
/// `@unchecked Sendable`: `jobs` is only touched with `condition` locked.
final class ThreadTaskExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = ThreadTaskExecutor()
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "slackindex-tests-executor"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

extension TestSupport {
    /// How late a `Task.sleep(for: duration)` on the calling executor wakes up right now: the machine's own share
    /// of a deadline overrun. Run it alongside the code under test (`async let`) so it sees the same load.
    static func timerLateness(_ duration: Duration) async -> Duration {
        let started = ContinuousClock.now
        try? await Task.sleep(for: duration)
        return max(.zero, (ContinuousClock.now - started) - duration)
    }
}
