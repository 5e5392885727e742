import Crypto
import Foundation
import Synchronization

/// The archive's file store: a folder beside the archive (`archive.sqlite` → `archive.files/`) holding each
/// distinct content once, named by its SHA-256 (`blobs/ab/ab12…`).
///
/// A blob is written to `tmp/` first, flushed to disk (`fsync`), then renamed into place and its folder flushed:
/// a blob under `blobs/` is always whole, whatever stops the process. Only the archive's `file_blob` row makes a
/// file count as fetched, and it is written after the rename; a process killed in between leaves a whole blob
/// that the next run finds and maps. Names from Slack never become paths: only hex digests do.
public struct FileBlobs: Sendable {
    /// The store's folder.
    public let root: String

    /// The store beside the archive at `archivePath`: its name without `.sqlite` (or whatever extension), plus
    /// `.files`.
    public init(archivePath: String) {
        let url = URL(fileURLWithPath: archivePath)
        let stem = url.deletingPathExtension().lastPathComponent
        root = url.deletingLastPathComponent().appendingPathComponent(stem + ".files").path
    }

    /// The store at `root`.
    public init(root: String) {
        self.root = root
    }

    /// Where the blob named `sha256` is (whether or not it exists); nil for a name that is not 64 hex digits, so
    /// nothing else can become a path.
    public func path(of sha256: String) -> String? {
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) })
        else { return nil }
        return root + "/blobs/" + sha256.prefix(2) + "/" + sha256
    }

    /// True when the blob `sha256` is in the store with `size` bytes.
    public func contains(_ sha256: String, size: Int64) -> Bool {
        guard let path = path(of: sha256) else { return false }
        var info = stat()
        return stat(path, &info) == 0 && Int64(info.st_size) == size
    }

    /// Bytes used by the blobs, as the file system allocates them.
    public func diskUsage() -> (blobs: Int, bytes: Int64) {
        var count = 0
        var bytes: Int64 = 0
        guard let walker = FileManager.default.enumerator(atPath: root + "/blobs") else { return (0, 0) }
        for case let relative as String in walker {
            var info = stat()
            guard stat(root + "/blobs/" + relative, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            count += 1
            bytes += Int64(info.st_blocks) * 512
        }
        return (count, bytes)
    }

    /// Removes temporary files that no running process writes (those of a process killed half way).
    public func removeAbandonedTemporaries() {
        let tmp = root + "/tmp"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: tmp) else { return }
        for name in names {
            // `PID-N.part`: kept while that process runs.
            let pid = name.split(separator: "-").first.flatMap { Int32($0) }
            if let pid, pid == getpid() || kill(pid, 0) == 0 || errno == EPERM { continue }
            unlink(tmp + "/" + name)
        }
    }

    /// A new blob to write: a temporary file until ``BlobWriter/commit()``.
    ///
    /// - Throws: ``FileStoreError`` when the store's folders cannot be made or the file cannot be created.
    public func begin() throws -> BlobWriter {
        try BlobWriter(store: self)
    }

    static let counter = Counter()

    /// Numbers temporary files within this process.
    final class Counter: Sendable {
        private let value = Atomic(0)
        func next() -> Int { value.wrappingAdd(1, ordering: .relaxed).newValue }
    }
}

/// One blob being written: bytes go to a temporary file and into a SHA-256 as they come; ``commit()`` makes it
/// durable under its digest, ``discard()`` removes it.
///
/// Not Sendable: one task writes it.
public final class BlobWriter {
    private let store: FileBlobs
    private let temporary: String
    private var descriptor: Int32
    private var hasher = SHA256()
    /// Bytes written so far.
    public private(set) var size: Int64 = 0
    /// The first bytes (up to 4 KiB), for deciding the type.
    public private(set) var prefix: [UInt8] = []

    init(store: FileBlobs) throws {
        self.store = store
        let tmp = store.root + "/tmp"
        do {
            try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        } catch {
            throw FileStoreError.failure(path: tmp, code: errno != 0 ? errno : EIO)
        }
        temporary = tmp + "/\(getpid())-\(FileBlobs.counter.next()).part"
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileStoreError.failure(path: temporary, code: errno) }
    }

    deinit {
        if descriptor >= 0 {
            close(descriptor)
            unlink(temporary)
        }
    }

    /// Appends `bytes`.
    ///
    /// - Throws: ``FileStoreError`` (a full disk among them).
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if prefix.count < 4096 { prefix += bytes.prefix(4096 - prefix.count) }
        hasher.update(bufferPointer: bytes)
        var done = 0
        while done < bytes.count {
            let n = Foundation.write(descriptor, base + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileStoreError.failure(path: temporary, code: errno)
            }
            done += n
        }
        size += Int64(bytes.count)
    }

    /// Makes the bytes durable as the blob named by their SHA-256 and returns that name, and whether the store
    /// had the blob already (the same bytes, fetched for another file: the temporary file is dropped).
    ///
    /// - Throws: ``FileStoreError`` when flushing or renaming fails.
    public func commit() throws -> (sha256: String, wasStored: Bool) {
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        guard fsync(descriptor) == 0 else { throw FileStoreError.failure(path: temporary, code: errno) }
        close(descriptor)
        descriptor = -1
        guard let target = store.path(of: digest) else { throw FileStoreError.failure(path: temporary, code: EINVAL) }
        if store.contains(digest, size: size) {
            unlink(temporary)
            return (digest, true)
        }
        let folder = (target as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            unlink(temporary)
            throw FileStoreError.failure(path: folder, code: errno == 0 ? EIO : errno)
        }
        guard rename(temporary, target) == 0 else {
            let code = errno
            unlink(temporary)
            throw FileStoreError.failure(path: target, code: code)
        }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        return (digest, false)
    }

    /// Removes the temporary file (a download that failed half way).
    public func discard() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
        unlink(temporary)
    }
}

/// A failure of the file store beside the archive; `description` is what the user sees.
public enum FileStoreError: Error, CustomStringConvertible, Sendable {
    /// A write failed: `code` is the `errno` (ENOSPC for a full disk).
    case cannotWrite(path: String, code: Int32, freeBytes: Int64?, reason: String)

    static func failure(path: String, code: Int32) -> FileStoreError {
        let reason = String(cString: strerror(code))
        return .cannotWrite(
            path: path, code: code, freeBytes: code == ENOSPC || code == EDQUOT ? SQLiteArchive.freeBytes(besides: path) : nil,
            reason: reason)
    }

    /// The store's folder (`….files`) that `path` is in, else `path`'s folder.
    static func store(of path: String) -> String {
        guard let range = path.range(of: ".files/", options: .backwards) else {
            return (path as NSString).deletingLastPathComponent
        }
        return String(path[..<range.lowerBound]) + ".files"
    }

    /// True for a full disk (or quota).
    public var isDiskFull: Bool {
        switch self {
        case .cannotWrite(_, let code, _, _): code == ENOSPC || code == EDQUOT
        }
    }

    public var description: String {
        switch self {
        case .cannotWrite(let path, _, let free, let reason):
            (isDiskFull
                ? "The disk holding the file store \(Self.store(of: path)) is full"
                    + (free.map { " (\(($0 + 999_999) / 1_000_000) MB free)" } ?? "")
                : "Writing \(path) failed (\(reason))")
                + ". Files stored before stay. Free some space (or fix the folder's permissions), then run the "
                + "same command again: it fetches only what is missing."
        }
    }
}
