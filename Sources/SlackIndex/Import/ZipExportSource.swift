import Foundation

/// An export still in its zip: the central directory is scanned, never held (`ZipReader.scanDirectory`), and entries
/// are inflated one at a time.
final class ZipExportSource: ExportSource, Sendable {
    let path: String
    /// The open zip: a day file's location is read again from its directory record (`DayFileEntry.record`).
    private let file: ZipFile
    private let directory: ZipReader.Directory
    /// The files beside the conversation folders (`channels.json`, `users.json`, …) by name: all of them, so that
    /// `listing(_:)` finds any name without the directory (an export has a handful).
    private let topFiles: [String: ZipReader.Location]
    /// A folder every entry sits in (some tools zip the export's folder, not its contents), with its `/`.
    private let prefix: String
    let dayFiles: DayFileList
    let places: [DayFolder]
    let ignoredFiles: [String]
    let folders: [String]
    let unreadable: [ImportSummary.SkippedFile]
    let attachedFiles: [AttachedFile]

    /// Lists the zip in two scans of its directory: the folder the export is wrapped in, if any, then the files.
    init(path: String) throws {
        self.path = path
        do {
            file = try ZipFile(path: path)
            directory = try ZipReader.findDirectory(in: file)
            // A day file's entry keeps its record's offset in 32 bits.
            guard directory.size <= UInt64(UInt32.max) else {
                throw ZipReader.Failure("its central directory is over 4 GB, more than an export's day files need")
            }
            prefix = try ZipExportSource.wrappingFolder(directory, of: file)
            var listed = Listed(path: path, prefix: prefix)
            // At most one per record (a record takes 46 bytes or more): appending would grow the list by doubling
            // and keep up to twice its size through the import.
            listed.days.reserveCapacity(Int(min(directory.count, directory.size / 46)))
            try ZipReader.scanDirectory(directory, of: file) { offset, location, name in
                // (offset < directory.size <= UInt32.max, checked above)
                listed.add(name, location: location, record: UInt32(truncatingIfNeeded: offset))
            }
            dayFiles = DayFileList(taking: &listed.days, bytesByPlace: listed.bytesByPlace, places: &listed.places)
            topFiles = listed.top
            places = listed.places
            ignoredFiles = listed.ignored.sorted()
            folders = listed.places.map(\.folder)
            unreadable = listed.refused.sorted { $0.path < $1.path }
            attachedFiles = listed.attached
        } catch {
            throw ImportError.unreadable(path: path, reason: "it is not a readable zip file (\(error))")
        }
    }

    /// What the zip's entries are, gathered while its directory is scanned.
    private struct Listed {
        let path: String
        let prefix: String
        var top: [String: ZipReader.Location] = [:]
        var days: [DayFileEntry] = []
        /// One folder record per folder, shared by its entries: its index in `places`.
        var placeIndex: [Substring: UInt32] = [:]
        var places: [DayFolder] = []
        /// The listed bytes of each folder's day files, by its index in `places`.
        var bytesByPlace: [Int64] = []
        var ignored: [String] = []
        var refused: [ImportSummary.SkippedFile] = []
        var attached: [AttachedFile] = []

        /// Files the entry named `fullPath` as a listing, a day file, or something reported; passes over folders'
        /// own entries, `__MACOSX` and hidden files.
        mutating func add(_ fullPath: String, location: ZipReader.Location, record: UInt32) {
            guard !fullPath.hasSuffix("/") else { return }  // A folder's own entry.
            guard fullPath.utf8.starts(with: prefix.utf8) else {
                // Beside the folder the export is wrapped in (another export zipped with it, notes): not read, but
                // said, as other files that are not day files are.
                ignored.append("\(path):\(fullPath)")
                return
            }
            // Split at the bytes `/` (a zip names its folders so; splitting by Characters was 15% of listing the
            // 10M export's zip).
            let relative = fullPath.utf8.dropFirst(prefix.utf8.count)
            guard let slash = relative.firstIndex(of: UInt8(ascii: "/")) else {
                if top.updateValue(location, forKey: String(Substring(relative))) != nil {
                    // The same name twice: the last is read (as for the listings before), the other said.
                    ignored.append("\(path):\(fullPath)")
                }
                return
            }
            let nameBytes = relative[relative.index(after: slash)...]
            guard !nameBytes.contains(UInt8(ascii: "/")) else {
                if let (id, name) = AttachedFile.parse(relativePath: Substring(relative)) {
                    attached.append(
                        AttachedFile(
                            fileID: id, name: name, size: Int64(clamping: location.uncompressedSize),
                            place: .zip(location)))
                } else {
                    ignored.append("\(path):\(fullPath)")
                }
                return
            }
            let folderName = Substring(relative[..<slash])
            let name = String(Substring(nameBytes))
            guard !folderName.hasPrefix("__MACOSX"), !name.hasPrefix(".") else { return }
            let place: UInt32
            if let known = placeIndex[folderName] {
                place = known
            } else {
                let folder = String(folderName)
                if let problem = unsafeFolderName(folder) {
                    refused.append(.init(path: "\(path):\(fullPath)", reason: problem))
                    return
                }
                guard let next = UInt32(exactly: places.count) else {
                    refused.append(.init(path: "\(path):\(fullPath)", reason: "the zip has over 4 billion folders"))
                    return
                }
                place = next
                places.append(DayFolder(folder: folder, container: "\(path):\(prefix)\(folder)/"))
                bytesByPlace.append(0)
                placeIndex[folderName] = place
            }
            if let day = dayNumber(ofDayFileName: name) {
                days.append(DayFileEntry(folderIndex: place, day: day, record: record))
                // Each counted up to 4 GB (a day file over 128 MB is refused when read): ZIP64 sizes near 2^64 do
                // not overflow the sum.
                bytesByPlace[Int(place)] += Int64(UInt32(clamping: location.uncompressedSize))
            } else {
                ignored.append("\(path):\(fullPath)")
            }
        }
    }

    /// Where the listing files are: `""` at the root, or the one folder the export is wrapped in, with its `/`
    /// (some tools zip the export's folder, not its contents).
    private static func wrappingFolder(_ directory: ZipReader.Directory, of file: ZipFile) throws -> String {
        var atRoot = false
        var first: String?
        try ZipReader.scanDirectory(directory, of: file) { _, _, key in
            guard !atRoot, !key.hasSuffix("/") else { return }
            if exportListingNames.contains(key) {
                atRoot = true
            } else if exportListingNames.contains(where: { key.hasSuffix("/" + $0) }),
                key.split(separator: "/").count == 2, first.map({ key < $0 }) ?? true
            {
                first = key
            }
        }
        guard !atRoot, let first, let slash = first.firstIndex(of: "/") else { return "" }
        return String(first[...slash])
    }

    func hasListing(_ name: String) -> Bool { topFiles[name] != nil }

    func read(_ file: AttachedFile, limit: UInt64) throws -> Data {
        guard case .zip(let location) = file.place else { throw ImportError.unreadable(path: path, reason: "not in this zip") }
        return try read(location, displayPath: "\(path):\(file.fileID)/\(file.name)", limit: limit)
    }

    /// A file beside the conversation folders.
    func listing(_ name: String) throws -> Data? {
        guard let location = topFiles[name] else { return nil }
        return try read(location, displayPath: "\(path):\(prefix + name)")
    }

    /// The day file's bytes, from its directory record read again; refused when the record can no longer be read or
    /// no longer names it (the zip was overwritten during the import; a file renamed over it is not seen: the open
    /// descriptor still reads the zip that was listed).
    func read(_ entry: DayFileEntry) throws -> Data {
        let displayPath = displayPath(of: entry)
        let location: ZipReader.Location
        do {
            let record = try ZipReader.record(at: UInt64(entry.record), of: directory, in: file)
            guard record.name == prefix + folder(of: entry) + "/" + entry.name else {
                throw ZipReader.Failure("it lists another file where this one was")
            }
            location = record.location
        } catch {
            // A zip unchanged since it was listed always reads its records again.
            throw ImportError.unreadable(
                path: displayPath, reason: "the zip's directory no longer reads as when it was listed, was the zip "
                    + "overwritten during the import? (\(error))")
        }
        return try read(location, displayPath: displayPath, limit: maximumDayFileSize)
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
