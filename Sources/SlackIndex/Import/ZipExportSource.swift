import Foundation

/// An export still in its zip (`ZipReader`): entries are inflated one at a time, never all at once.
final class ZipExportSource: ExportSource, Sendable {
    let path: String
    private let zip: ZipReader
    private let entriesByPath: [String: ZipReader.Entry]
    /// A folder every entry sits in (some tools zip the export's folder, not its contents), with its `/`.
    private let prefix: String
    let dayFiles: [DayFileEntry]
    let ignoredFiles: [String]
    let folders: [String]
    let unreadable: [ImportSummary.SkippedFile]

    init(path: String) throws {
        self.path = path
        do {
            zip = try ZipReader(path: path)
        } catch {
            throw ImportError.unreadable(path: path, reason: "it is not a readable zip file (\(error))")
        }
        var byPath: [String: ZipReader.Entry] = [:]
        byPath.reserveCapacity(zip.entries.count)
        for entry in zip.entries where !entry.isDirectory {
            byPath[entry.path] = entry
        }
        entriesByPath = byPath
        // Find the listing files: at the root, or inside one wrapping folder.
        var prefix = ""
        if !exportListingNames.contains(where: { byPath[$0] != nil }) {
            let candidates = byPath.keys.filter { key in
                exportListingNames.contains { key.hasSuffix("/" + $0) } && key.split(separator: "/").count == 2
            }
            if let first = candidates.sorted().first, let slash = first.firstIndex(of: "/") {
                prefix = String(first[...slash])
            }
        }
        self.prefix = prefix
        var days: [DayFileEntry] = []
        var ignored: [String] = []
        var folderSet = Set<String>()
        var refused: [ImportSummary.SkippedFile] = []
        for (fullPath, entry) in byPath {
            guard fullPath.hasPrefix(prefix) else { continue }
            let relative = fullPath.dropFirst(prefix.count)
            let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                if parts.count > 2 { ignored.append("\(path):\(fullPath)") }
                continue
            }
            let folder = String(parts[0])
            let name = String(parts[1])
            guard !folder.hasPrefix("__MACOSX"), !name.hasPrefix(".") else { continue }
            if let problem = unsafeFolderName(folder) {
                refused.append(.init(path: "\(path):\(fullPath)", reason: problem))
                continue
            }
            folderSet.insert(folder)
            if isDayFileName(name) {
                days.append(
                    DayFileEntry(
                        folder: folder, name: name, size: Int64(clamping: entry.uncompressedSize),
                        displayPath: "\(path):\(fullPath)"))
            } else {
                ignored.append("\(path):\(fullPath)")
            }
        }
        days.sort { ($0.folder, $0.name) < ($1.folder, $1.name) }
        dayFiles = days
        ignoredFiles = ignored.sorted()
        folders = folderSet.sorted()
        unreadable = refused.sorted { $0.path < $1.path }
    }

    func listing(_ name: String) throws -> Data? {
        guard let entry = entriesByPath[prefix + name] else { return nil }
        return try read(entry, displayPath: "\(path):\(prefix + name)")
    }

    func read(_ entry: DayFileEntry) throws -> Data {
        let fullPath = prefix + entry.folder + "/" + entry.name
        guard let zipEntry = entriesByPath[fullPath] else {
            throw ImportError.unreadable(path: entry.displayPath, reason: "the zip entry disappeared")
        }
        return try read(zipEntry, displayPath: entry.displayPath, limit: maximumDayFileSize)
    }

    private func read(
        _ entry: ZipReader.Entry, displayPath: String, limit: UInt64 = ZipReader.maximumEntrySize
    ) throws -> Data {
        do {
            try ZipReader.checkSize(of: entry, limit: limit)
            return try zip.data(of: entry)
        } catch {
            throw ImportError.unreadable(path: displayPath, reason: "\(error)")
        }
    }
}
