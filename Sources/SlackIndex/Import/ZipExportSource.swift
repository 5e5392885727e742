import Foundation

/// An export still in its zip (`ZipReader`): entries are inflated one at a time, never all at once.
final class ZipExportSource: ExportSource, Sendable {
    let path: String
    /// The open zip: the directory (`ZipReader`) is let go once listed, each day file's `DayFileEntry` says
    /// where it lies.
    private let file: ZipFile
    /// The files beside the conversation folders (`channels.json`, `users.json`, …) by name: all of them, so that
    /// `listing(_:)` finds any name without the directory (an export has a handful).
    private let topFiles: [String: ZipReader.Location]
    /// A folder every entry sits in (some tools zip the export's folder, not its contents), with its `/`.
    private let prefix: String
    let dayFiles: [DayFileEntry]
    let ignoredFiles: [String]
    let folders: [String]
    let unreadable: [ImportSummary.SkippedFile]

    init(path: String) throws {
        self.path = path
        let zip: ZipReader
        do {
            zip = try ZipReader(path: path)
        } catch {
            throw ImportError.unreadable(path: path, reason: "it is not a readable zip file (\(error))")
        }
        let entries = zip.entries
        let files = entries.indices.filter { !entries[$0].isDirectory }
        let prefix = ZipExportSource.wrappingFolder(of: files, in: zip)
        self.prefix = prefix
        file = zip.file
        var top: [String: ZipReader.Location] = [:]
        var days: [DayFileEntry] = []
        // At most one per file: appending would grow the array by doubling (67 MB at the 10M export's peak, for
        // 28 MB of entries).
        days.reserveCapacity(files.count)
        var ignored: [String] = []
        // One folder record per folder, shared by its entries.
        var shared: [Substring: DayFolder] = [:]
        var refused: [ImportSummary.SkippedFile] = []
        for index in files {
            let entry = entries[index]
            let fullPath = zip.path(of: entry)
            guard fullPath.hasPrefix(prefix) else {
                // Beside the folder the export is wrapped in (another export zipped with it, notes): not read, but
                // said, as other files that are not day files are.
                ignored.append("\(path):\(fullPath)")
                continue
            }
            let relative = fullPath.dropFirst(prefix.count)
            let parts = relative.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                if parts.count > 2 {
                    ignored.append("\(path):\(fullPath)")
                } else if top.updateValue(entry.location, forKey: String(relative)) != nil {
                    // The same name twice: the last is read (as for the listings before), the other said.
                    ignored.append("\(path):\(fullPath)")
                }
                continue
            }
            let name = String(parts[1])
            guard !parts[0].hasPrefix("__MACOSX"), !name.hasPrefix(".") else { continue }
            let place: DayFolder
            if let known = shared[parts[0]] {
                place = known
            } else {
                let folder = String(parts[0])
                if let problem = unsafeFolderName(folder) {
                    refused.append(.init(path: "\(path):\(fullPath)", reason: problem))
                    continue
                }
                place = DayFolder(folder: folder, container: "\(path):\(prefix)\(folder)/")
                shared[parts[0]] = place
            }
            if let day = dayNumber(ofDayFileName: name) {
                days.append(DayFileEntry(place: place, day: day, location: entry.location))
            } else {
                ignored.append("\(path):\(fullPath)")
            }
        }
        days.sort { ($0.day, $0.folder) < ($1.day, $1.folder) }
        topFiles = top
        dayFiles = days
        ignoredFiles = ignored.sorted()
        folders = shared.values.map(\.folder).sorted()
        unreadable = refused.sorted { $0.path < $1.path }
    }

    /// Where the listing files are: `""` at the root, or the one folder the export is wrapped in, with its `/`
    /// (some tools zip the export's folder, not its contents).
    private static func wrappingFolder(of files: [Int], in zip: ZipReader) -> String {
        let entries = zip.entries
        if files.contains(where: { exportListingNames.contains(zip.path(of: entries[$0])) }) { return "" }
        let candidates = files.lazy.map { zip.path(of: entries[$0]) }.filter { key in
            exportListingNames.contains { key.hasSuffix("/" + $0) } && key.split(separator: "/").count == 2
        }
        guard let first = candidates.min(), let slash = first.firstIndex(of: "/") else { return "" }
        return String(first[...slash])
    }

    /// A file beside the conversation folders.
    func listing(_ name: String) throws -> Data? {
        guard let location = topFiles[name] else { return nil }
        return try read(location, displayPath: "\(path):\(prefix + name)")
    }

    func read(_ entry: DayFileEntry) throws -> Data {
        try read(entry.location, displayPath: entry.displayPath, limit: maximumDayFileSize)
    }

    private func read(
        _ location: ZipReader.Location, displayPath: String, limit: UInt64 = ZipReader.maximumEntrySize
    ) throws -> Data {
        do {
            return try file.data(at: location, limit: limit)
        } catch {
            throw ImportError.unreadable(path: displayPath, reason: "\(error)")
        }
    }
}
