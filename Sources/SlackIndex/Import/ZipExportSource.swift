import Foundation

/// An export still in its zip (`ZipReader`): entries are inflated one at a time, never all at once.
final class ZipExportSource: ExportSource, Sendable {
    let path: String
    private let zip: ZipReader
    /// The listing files' entries (`channels.json`, `users.json`, …) by path: the day files are found through
    /// their `DayFileEntry.zipIndex`, so the zip's directory is not held twice.
    private let listingEntries: [String: ZipReader.Entry]
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
        // Find the listing files: at the root, or inside one wrapping folder.
        let entries = zip.entries
        let files = entries.indices.filter { !entries[$0].isDirectory }
        var prefix = ""
        if !files.contains(where: { exportListingNames.contains(entries[$0].path) }) {
            let candidates = files.lazy.map { entries[$0].path }.filter { key in
                exportListingNames.contains { key.hasSuffix("/" + $0) } && key.split(separator: "/").count == 2
            }
            if let first = candidates.min(), let slash = first.firstIndex(of: "/") {
                prefix = String(first[...slash])
            }
        }
        self.prefix = prefix
        var listings: [String: ZipReader.Entry] = [:]
        var days: [DayFileEntry] = []
        var ignored: [String] = []
        // One folder string and one container string per folder, shared by its entries.
        var shared: [Substring: (folder: String, container: String)] = [:]
        var refused: [ImportSummary.SkippedFile] = []
        for index in files {
            let entry = entries[index]
            let fullPath = entry.path
            guard fullPath.hasPrefix(prefix) else { continue }
            let relative = fullPath.dropFirst(prefix.count)
            let parts = relative.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                if parts.count > 2 {
                    ignored.append("\(path):\(fullPath)")
                } else if exportListingNames.contains(String(relative)) {
                    listings[fullPath] = entry
                }
                continue
            }
            let name = String(parts[1])
            guard !parts[0].hasPrefix("__MACOSX"), !name.hasPrefix(".") else { continue }
            let strings: (folder: String, container: String)
            if let known = shared[parts[0]] {
                strings = known
            } else {
                let folder = String(parts[0])
                if let problem = unsafeFolderName(folder) {
                    refused.append(.init(path: "\(path):\(fullPath)", reason: problem))
                    continue
                }
                strings = (folder, "\(path):\(prefix)\(folder)/")
                shared[parts[0]] = strings
            }
            if isDayFileName(name), let zipIndex = Int32(exactly: index) {
                days.append(
                    DayFileEntry(
                        folder: strings.folder, name: name, size: Int64(clamping: entry.uncompressedSize),
                        container: strings.container, zipIndex: zipIndex))
            } else {
                ignored.append("\(path):\(fullPath)")
            }
        }
        days.sort { ($0.name, $0.folder) < ($1.name, $1.folder) }
        listingEntries = listings
        dayFiles = days
        ignoredFiles = ignored.sorted()
        folders = shared.values.map(\.folder).sorted()
        unreadable = refused.sorted { $0.path < $1.path }
    }

    /// A file beside the conversation folders; the listing files are found at once, any other name by a walk of
    /// the zip's directory.
    func listing(_ name: String) throws -> Data? {
        let key = prefix + name
        let other = exportListingNames.contains(name) ? nil : zip.entries.first { !$0.isDirectory && $0.path == key }
        guard let entry = listingEntries[key] ?? other else { return nil }
        return try read(entry, displayPath: "\(path):\(prefix + name)")
    }

    func read(_ entry: DayFileEntry) throws -> Data {
        guard zip.entries.indices.contains(Int(entry.zipIndex)) else {
            throw ImportError.unreadable(path: entry.displayPath, reason: "the zip entry disappeared")
        }
        return try read(zip.entries[Int(entry.zipIndex)], displayPath: entry.displayPath, limit: maximumDayFileSize)
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
