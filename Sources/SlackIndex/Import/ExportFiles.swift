import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The export readers' questions to the file system, answered with a reason a person can act on.
///
/// `stat(2)` rather than `FileManager.attributesOfItem`: Foundation names a FIFO "unknown" and reports reading one
/// (or a device) as a permission problem, and reading a FIFO would block the import forever.
enum ExportFiles {
    /// What a path is, links followed.
    enum Kind: Equatable {
        case file(size: Int64)
        case folder
        /// Anything else, in words ("a named pipe (FIFO)").
        case other(String)
    }

    /// What a folder holds: the names that are valid UTF-8, and those that are not.
    struct Listing {
        var names: [String] = []
        /// Names whose bytes are not UTF-8, shown with `\xNN` for the bytes that are not: no path made of a Swift
        /// string reaches such a file (Foundation listed them with U+FFFD in their place, and opening that name
        /// failed with "No such file or directory"; issue 47's D11).
        var undecodable: [String] = []

        /// The undecodable names of `folder` as skipped files, with what to do.
        func skipped(in folder: String) -> [ImportSummary.SkippedFile] {
            undecodable.map {
                .init(
                    path: folder + "/" + $0,
                    reason: "its name is not valid UTF-8 (shown with \\x escapes); rename it to UTF-8 (for example "
                        + "with `convmv -f latin1 -t utf8 -r --notest`) and import again")
            }
        }
    }

    /// The names in `folder` (not `.` and `..`), or why it cannot be listed.
    ///
    /// - Complexity: O(n) entries, read with `readdir(3)` as raw bytes.
    static func names(in folder: String) -> Result<Listing, Failure> {
        guard let directory = opendir(folder) else { return .failure(Failure(folder, errnoText())) }
        defer { closedir(directory) }
        var listing = Listing()
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { return .failure(Failure(folder, errnoText())) }
                return .success(listing)
            }
            let bytes = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            if let name = String(validating: bytes, as: UTF8.self) {
                listing.names.append(name)
            } else {
                listing.undecodable.append(Self.escaped(bytes))
            }
        }
    }

    /// The bytes as text, each byte that is not part of valid UTF-8 as `\xNN`.
    static func escaped(_ bytes: [UInt8]) -> String {
        var out = ""
        var index = 0
        while index < bytes.count {
            // The longest valid UTF-8 sequence starting here (1 to 4 bytes), else one escaped byte.
            let valid = (1...4).reversed().first { length in
                index + length <= bytes.count
                    && String(validating: bytes[index..<(index + length)], as: UTF8.self) != nil
            }
            if let valid, let text = String(validating: bytes[index..<(index + valid)], as: UTF8.self) {
                out += text
                index += valid
            } else {
                out += "\\x" + String(bytes[index], radix: 16, uppercase: true).leftPadded(to: 2)
                index += 1
            }
        }
        return out
    }

    /// What `path` is, following links; a link that leads outside `root` (a resolved folder path) is refused and
    /// not followed.
    static func kind(of path: String, inside root: String?) -> Result<Kind, Failure> {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            var failure = Failure(path, String(cString: strerror(code)))
            failure.isMissing = code == ENOENT
            return .failure(failure)
        }
        if info.st_mode & S_IFMT == S_IFLNK, let root {
            guard let target = resolved(path) else { return .failure(Failure(path, "the link leads nowhere")) }
            guard target == root || target.hasPrefix(root.hasSuffix("/") ? root : root + "/") else {
                return .failure(Failure(path, "it is a link to \(target), outside the export (not followed)"))
            }
        }
        guard stat(path, &info) == 0 else { return .failure(Failure(path, errnoText())) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .success(.file(size: Int64(info.st_size)))
        case S_IFDIR: return .success(.folder)
        case S_IFIFO: return .success(.other("a named pipe (FIFO)"))
        case S_IFCHR, S_IFBLK: return .success(.other("a device"))
        case S_IFSOCK: return .success(.other("a socket"))
        default: return .success(.other("not a regular file"))
        }
    }

    /// The path with every link resolved, or nil when it does not resolve.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// A file or folder that could not be used, and why.
    struct Failure: Error {
        var path: String
        var reason: String
        /// Nothing is at the path.
        var isMissing = false
        init(_ path: String, _ reason: String) {
            self.path = path
            self.reason = reason
        }

        var skipped: ImportSummary.SkippedFile { .init(path: path, reason: reason) }
    }

    /// The system's words for `errno` ("Permission denied").
    static func errnoText() -> String { String(cString: strerror(errno)) }

    /// The POSIX reason under a Foundation error, which otherwise reads "You don't have permission…" for any
    /// failure to open.
    static func reason(for error: any Error) -> String {
        let ns = error as NSError
        if let posix = ns.userInfo[NSUnderlyingErrorKey] as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(clamping: underlying.code)))
        }
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(clamping: ns.code))) }
        return ns.localizedDescription
    }
}

/// The largest day file read (one conversation's day: real ones are a few MB). Larger ones, and zip entries that
/// would inflate past it, are reported as skipped so that one file cannot take the import's memory.
let maximumDayFileSize: UInt64 = 128 << 20

/// Why a conversation folder's name cannot be used, or nil: an empty name, `.` or `..` (a zip entry named
/// `/2024-01-04.json` or `../2024-01-02.json`), or one with a control character.
func unsafeFolderName(_ folder: String) -> String? {
    if folder.isEmpty { return "the entry has no conversation folder (an absolute or empty path)" }
    if folder == "." || folder == ".." { return "the entry's folder '\(folder)' leads out of the export" }
    if folder.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\\" }) {
        return "the entry's folder name holds a control character or a backslash"
    }
    return nil
}

extension String {
    /// The string with `0` in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
