import Foundation

/// One day file of one conversation folder inside an export, as `DayFileList` hands it out.
struct DayFileEntry: Sendable {
    /// A zip export: where the file's record starts in the zip's central directory, from the directory's start (a
    /// zip's directory over 4 GB is refused). A folder export: 0.
    let record: UInt32
    /// The conversation folder's index in the source's `places`.
    var folderIndex: UInt32
    /// The date the name gives, as the number YYYYMMDD (`2024-01-15.json` is 20240115): it sorts as the name does.
    let day: Int32

    /// The day file of date `day` (`dayNumber(ofDayFileName:)`) in the folder `places[folderIndex]`.
    init(folderIndex: UInt32, day: Int32, record: UInt32 = 0) {
        self.record = record
        self.folderIndex = folderIndex
        self.day = day
    }

    /// The file name, e.g. `2024-01-15.json`.
    var name: String {
        var bytes = Array("0000-00-00.json".utf8)
        var rest = day.magnitude  // (0...99,999,999 from `dayNumber`; no trap on any other)
        for index in [9, 8, 6, 5, 3, 2, 1, 0] {
            bytes[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// An export's day files in the order the import reads them: by date, then by folder name.
///
/// The import holds the list from start to end (698,664 files in the generated 10M-message export), so a file takes
/// 8 bytes: its folder (an index into the source's `places`, `ExportSource.place(of:)`) and where its record lies in
/// the zip's central directory (a zip entry's location is read again from there when the file is read,
/// `ZipExportSource.read`); the date is kept once for all the files of that date, and sizes only as a sum per
/// folder (progress counts the bytes read). With the date and size in every entry (16 bytes) the list was 11.2 MB
/// at the 10M import's peak (heaptrack), with a location and a shared folder object (48 bytes) 34 MB.
struct DayFileList: RandomAccessCollection, Sendable {
    /// The files of one date: positions `files` of the list.
    struct Day: Sendable {
        /// The date as the number YYYYMMDD.
        let number: Int32
        let files: Range<Int>
    }

    /// Each file's folder index (high 32 bits) and record (low 32 bits), in the list's order.
    private let packed: [UInt64]
    /// The dates in order, each with its files.
    let days: [Day]
    /// The bytes of each folder's day files as listed, by folder index (each file counted up to 4 GB: the sum
    /// cannot overflow, a zip lists at most 4 GB / 46 bytes of files, a folder's files are refused over 128 MB).
    let bytesByPlace: [Int64]

    /// Takes `listed`'s entries (it is left empty: sorted in place, not copied) and sorts them by date, then by
    /// folder name, and `places` by name, renumbering the entries' folders; `bytesByPlace` is by the folders'
    /// indices before the sort.
    init(taking listed: inout [DayFileEntry], bytesByPlace: [Int64], places: inout [DayFolder]) {
        var entries: [DayFileEntry] = []
        swap(&entries, &listed)
        let order = places.indices.sorted { places[$0].folder < places[$1].folder }
        var rank = [UInt32](repeating: 0, count: places.count)
        for (new, old) in order.enumerated() { rank[old] = UInt32(new) }
        places = order.map { places[$0] }
        self.bytesByPlace = order.map { bytesByPlace[$0] }
        for index in entries.indices { entries[index].folderIndex = rank[Int(entries[index].folderIndex)] }
        entries.sort { ($0.day, $0.folderIndex) < ($1.day, $1.folderIndex) }
        packed = entries.map { UInt64($0.folderIndex) << 32 | UInt64($0.record) }
        var days: [Day] = []
        var start = 0
        while start < entries.count {
            var end = start + 1
            while end < entries.count && entries[end].day == entries[start].day { end += 1 }
            days.append(Day(number: entries[start].day, files: start..<end))
            start = end
        }
        self.days = days
    }

    var startIndex: Int { 0 }
    var endIndex: Int { packed.count }

    /// The file at `position` (its date found by a binary search of the dates).
    subscript(position: Int) -> DayFileEntry {
        var low = 0
        var high = days.count - 1
        while low < high {
            let middle = (low + high) / 2
            if days[middle].files.upperBound <= position { low = middle + 1 } else { high = middle }
        }
        return file(at: position, of: days[low])
    }

    /// The file at `position`, one of the files of `day`.
    func file(at position: Int, of day: Day) -> DayFileEntry {
        let value = packed[position]
        return DayFileEntry(
            folderIndex: UInt32(truncatingIfNeeded: value >> 32), day: day.number,
            record: UInt32(truncatingIfNeeded: value))
    }

    /// The listed bytes of every day file.
    var bytes: Int64 { bytesByPlace.reduce(0, +) }

    /// Each file's folder index, in the list's order: without the date search of each file that the subscript does
    /// (iterating the list as a collection searches the dates once per file).
    var folderIndices: LazyMapSequence<[UInt64], UInt32> {
        packed.lazy.map { UInt32(truncatingIfNeeded: $0 >> 32) }
    }
}

/// A conversation folder of an export, shared by its day files' entries.
final class DayFolder: Sendable {
    /// The folder's name (channel name, DM id, group DM name).
    let folder: String
    /// What comes before a day file's name in its `displayPath` (`export.zip:general/`, `/path/to/export/general/`).
    let container: String

    init(folder: String, container: String) {
        self.folder = folder
        self.container = container
    }
}

/// One protocol over folder and zip exports: listing files by name, and the day files in order.
///
/// Implementations are used by one thread at a time (the importer hands a source to its reader thread).
protocol ExportSource: Sendable {
    /// The export's path, for messages.
    var path: String { get }
    /// Reads a top-level file (`users.json`, `channels.json`…); nil when the export has none.
    func listing(_ name: String) throws -> Data?
    /// Whether the export has a top-level entry of that name, read or not (a folder, an unreadable file and a
    /// link outside the export count: reading it then reports why it cannot be read).
    func hasListing(_ name: String) -> Bool
    /// The day files, sorted by date then folder: the order the import reads them in (the source's list is the
    /// import's, not a sorted copy of it).
    var dayFiles: DayFileList { get }
    /// Every conversation folder listed (some may hold no day file), sorted by name; a `DayFileEntry` names one by
    /// its index.
    var places: [DayFolder] { get }
    /// Other files found inside conversation folders that are not day files (reported, not imported).
    var ignoredFiles: [String] { get }
    /// The names of the top-level folders.
    var folders: [String] { get }
    /// Folders and files that could not be read or were refused (reported as skipped: exit status 2).
    var unreadable: [ImportSummary.SkippedFile] { get }
    /// Reads a day file's bytes.
    func read(_ entry: DayFileEntry) throws -> Data
    /// Files the export carries beside its messages (slackdump's `__uploads/<file id>/<name>`, or
    /// `<conversation>/attachments/<file id>-<name>`), in the order listed.
    var attachedFiles: [AttachedFile] { get }
    /// Reads an attached file's bytes (at most `limit`).
    func read(_ file: AttachedFile, limit: UInt64) throws -> Data
}

/// A file an export carries beside its messages, named by the Slack file id its path gives.
struct AttachedFile: Sendable {
    var fileID: String
    /// The name in the export, for messages and for deciding the type.
    var name: String
    var size: Int64
    /// Where the bytes are: a path in a folder export, an entry in a zip.
    enum Place: Sendable {
        case path(String)
        case zip(ZipReader.Location)
    }
    var place: Place

    /// The file id and name of an export's path relative to its root: `__uploads/F0123/name.png` (slackdump's
    /// default layout) or `<folder>/attachments/F0123-name.png` (its standard one); nil for any other path.
    static func parse(relativePath: some StringProtocol) -> (fileID: String, name: String)? {
        let parts = relativePath.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0] == "__uploads", isFileID(parts[1]), !parts[2].isEmpty {
            return (String(parts[1]), String(parts[2]))
        }
        if parts.count == 3, parts[1] == "attachments", let dash = parts[2].firstIndex(of: "-"),
            isFileID(parts[2][..<dash]), parts[2].index(after: dash) < parts[2].endIndex
        {
            return (String(parts[2][..<dash]), String(parts[2][parts[2].index(after: dash)...]))
        }
        return nil
    }

    /// What slackdump's `__uploads/<file id>/<name>` folder at `folderPath` holds (in an export made with file
    /// downloads, or beside a `slackdump.sqlite`): the files, the entries of another shape (ignored, reported) and
    /// what cannot be read. Links that lead outside `root` are not followed.
    ///
    /// - Complexity: O(n log n) for the folder's n entries.
    static func uploads(in folderPath: String, root: String) -> (
        files: [AttachedFile], ignored: [String], unreadable: [ImportSummary.SkippedFile]
    ) {
        var files: [AttachedFile] = []
        var ignored: [String] = []
        guard case .success(let ids) = ExportFiles.names(in: folderPath) else {
            return ([], [], [.init(path: folderPath, reason: "the folder cannot be read")])
        }
        for id in ids.names.sorted() {
            let idPath = folderPath + "/" + id
            guard isFileID(id), case .success(.folder) = ExportFiles.kind(of: idPath, inside: root),
                case .success(let names) = ExportFiles.names(in: idPath)
            else {
                ignored.append(idPath)
                continue
            }
            for name in names.names.sorted() {
                let filePath = idPath + "/" + name
                // A dot-file (macOS's `._name` beside a copied file, `.DS_Store`) is not the file: taken as it, it
                // would be stored as the file's bytes and the real one counted as already there.
                guard !name.hasPrefix("."), case .success(.file(let size)) = ExportFiles.kind(of: filePath, inside: root)
                else {
                    ignored.append(filePath)
                    continue
                }
                files.append(AttachedFile(fileID: id, name: name, size: size, place: .path(filePath)))
            }
        }
        return (files, ignored, [])
    }

    /// The bytes of the file at `filePath` inside the folder `root` (links resolved must stay inside it), at most
    /// `limit` of them.
    ///
    /// - Throws: `ImportError.unreadable` saying why (too large, not a file, outside the folder, unreadable).
    static func read(_ filePath: String, inside root: String, limit: UInt64) throws -> Data {
        switch ExportFiles.kind(of: filePath, inside: root) {
        case .success(.file(let size)) where UInt64(clamping: size) <= limit:
            do {
                return try Data(contentsOf: URL(fileURLWithPath: filePath))
            } catch {
                throw ImportError.unreadable(path: filePath, reason: ExportFiles.reason(for: error))
            }
        case .success(.file(let size)):
            throw ImportError.unreadable(path: filePath, reason: "it is \(size) bytes, over the \(limit) stored per file")
        case .success: throw ImportError.unreadable(path: filePath, reason: "it is not a file")
        case .failure(let failure): throw ImportError.unreadable(path: filePath, reason: failure.reason)
        }
    }

    /// `F` and 2 to 31 capitals and digits: Slack's file ids.
    static func isFileID(_ text: some StringProtocol) -> Bool {
        let bytes = Array(text.utf8)
        return (3...32).contains(bytes.count) && bytes[0] == UInt8(ascii: "F")
            && bytes.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) }
    }
}

extension ExportSource {
    /// The folder `entry` lies in (entries come from this source: their index is in range).
    func place(of entry: DayFileEntry) -> DayFolder { places[Int(entry.folderIndex)] }
    /// The conversation folder (channel name, DM id, group DM name) `entry` lies in.
    func folder(of entry: DayFileEntry) -> String { place(of: entry).folder }
    /// Where the file is, as a person would name it (`export.zip:general/2024-01-15.json`).
    func displayPath(of entry: DayFileEntry) -> String { place(of: entry).container + entry.name }
}

/// A day file's name: `YYYY-MM-DD.json`.
func isDayFileName(_ name: String) -> Bool { dayNumber(ofDayFileName: name) != nil }

/// The date a day file's name gives as the number YYYYMMDD (`2024-01-15.json` is 20240115), or nil when the name
/// is not `YYYY-MM-DD.json` (any digits: an impossible date is still a day file, read and reported as such).
func dayNumber(ofDayFileName name: String) -> Int32? {
    let bytes = Array(name.utf8)
    guard bytes.count == 15, name.hasSuffix(".json") else { return nil }
    var number: Int32 = 0
    for (index, byte) in bytes.prefix(10).enumerated() {
        if index == 4 || index == 7 {
            guard byte == UInt8(ascii: "-") else { return nil }
        } else {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            number = number * 10 + Int32(byte - UInt8(ascii: "0"))
        }
    }
    return number
}

/// The top-level files an export may hold; their presence tells an export from other folders.
let exportListingNames = [
    "users.json", "org_users.json", "channels.json", "groups.json", "dms.json", "mpims.json",
]

/// An export unpacked into a folder.
struct FolderExportSource: ExportSource {
    let path: String
    let root: URL
    /// The export folder with its links resolved: links that lead outside it are not followed.
    private let resolvedRoot: String
    let dayFiles: DayFileList
    let places: [DayFolder]
    let ignoredFiles: [String]
    let folders: [String]
    let unreadable: [ImportSummary.SkippedFile]
    let attachedFiles: [AttachedFile]

    init(path: String) throws {
        self.path = path
        root = URL(fileURLWithPath: path, isDirectory: true)
        resolvedRoot = ExportFiles.resolved(path) ?? root.standardizedFileURL.path
        let top: [String]
        var listed = Listed()
        switch ExportFiles.names(in: path) {
        case .success(let listing):
            top = listing.names.sorted()
            listed.unreadable += listing.skipped(in: path)
        case .failure(let failure): throw ImportError.unreadable(path: path, reason: failure.reason)
        }
        for folder in top where !folder.hasPrefix(".") && !exportListingNames.contains(folder) {
            let folderPath = root.appendingPathComponent(folder).path
            if folder == "__uploads" {
                listed.addUploads(at: folderPath, root: resolvedRoot)
                continue
            }
            switch ExportFiles.kind(of: folderPath, inside: resolvedRoot) {
            case .success(.folder): listed.addFolder(folder, at: folderPath, root: resolvedRoot)
            case .success: continue  // A file beside the listings (a README, an integration log).
            case .failure(let failure): listed.unreadable.append(failure.skipped)
            }
        }
        dayFiles = DayFileList(taking: &listed.days, bytesByPlace: listed.bytesByPlace, places: &listed.places)
        places = listed.places
        ignoredFiles = listed.ignored
        folders = listed.folders
        unreadable = listed.unreadable
        attachedFiles = listed.attached
    }

    func read(_ file: AttachedFile, limit: UInt64) throws -> Data {
        guard case .path(let filePath) = file.place else { throw ImportError.unreadable(path: path, reason: "not in this export") }
        return try AttachedFile.read(filePath, inside: resolvedRoot, limit: limit)
    }

    /// What the folders of an export hold, gathered while listing them.
    private struct Listed {
        var days: [DayFileEntry] = []
        var places: [DayFolder] = []
        /// The listed bytes of each folder's day files, by its index in `places`.
        var bytesByPlace: [Int64] = []
        var ignored: [String] = []
        var folders: [String] = []
        var unreadable: [ImportSummary.SkippedFile] = []
        var attached: [AttachedFile] = []

        /// Lists slackdump's `__uploads/<file id>/<name>`: the files it downloaded. Other entries are ignored (said).
        mutating func addUploads(at folderPath: String, root: String) {
            let found = AttachedFile.uploads(in: folderPath, root: root)
            attached += found.files
            ignored += found.ignored
            unreadable += found.unreadable
        }

        /// Lists slackdump's `<conversation>/attachments/<file id>-<name>` (its standard layout); false when
        /// `folderPath` is not a folder.
        mutating func addAttachments(at folderPath: String, folder: String, root: String) -> Bool {
            guard case .success(.folder) = ExportFiles.kind(of: folderPath, inside: root),
                case .success(let names) = ExportFiles.names(in: folderPath)
            else { return false }
            for name in names.names.sorted() {
                let filePath = folderPath + "/" + name
                guard let (id, shown) = AttachedFile.parse(relativePath: folder + "/attachments/" + name),
                    case .success(.file(let size)) = ExportFiles.kind(of: filePath, inside: root)
                else {
                    ignored.append(filePath)
                    continue
                }
                attached.append(AttachedFile(fileID: id, name: shown, size: size, place: .path(filePath)))
            }
            return true
        }

        /// Lists one conversation folder: its day files, other files (ignored, reported) and what cannot be read.
        mutating func addFolder(_ folder: String, at folderPath: String, root: String) {
            if let problem = unsafeFolderName(folder) {
                unreadable.append(.init(path: folderPath, reason: problem))
                return
            }
            let names: [String]
            switch ExportFiles.names(in: folderPath) {
            case .success(let found):
                names = found.names
                unreadable += found.skipped(in: folderPath)
            case .failure(let failure):
                unreadable.append(.init(path: failure.path, reason: "the folder cannot be read: \(failure.reason)"))
                return
            }
            guard let place = UInt32(exactly: places.count) else {
                unreadable.append(.init(path: folderPath, reason: "the export has over 4 billion folders"))
                return
            }
            folders.append(folder)
            // Every entry of this folder shares these strings; `displayPath` is `folderPath/name` again.
            places.append(DayFolder(folder: folder, container: folderPath + "/"))
            bytesByPlace.append(0)
            for name in names.sorted() {
                let filePath = folderPath + "/" + name
                guard let day = dayNumber(ofDayFileName: name) else {
                    if name == "attachments", addAttachments(at: filePath, folder: folder, root: root) { continue }
                    ignored.append(filePath)
                    continue
                }
                switch ExportFiles.kind(of: filePath, inside: root) {
                case .success(.file(let size)) where UInt64(clamping: size) > maximumDayFileSize:
                    unreadable.append(
                        .init(path: filePath, reason: "the day file is \(size >> 20) MB, over the \(maximumDayFileSize >> 20) MB read per day file"))
                case .success(.file(let size)):
                    days.append(DayFileEntry(folderIndex: place, day: day))
                    bytesByPlace[Int(place)] += Int64(clamping: size)
                case .success(.folder):
                    unreadable.append(.init(path: filePath, reason: "it is a folder, not a day file"))
                case .success(.other(let what)):
                    unreadable.append(.init(path: filePath, reason: "it is \(what), not a day file"))
                case .failure(let failure):
                    unreadable.append(failure.skipped)
                }
            }
        }
    }

    func listing(_ name: String) throws -> Data? {
        let url = root.appendingPathComponent(name)
        switch ExportFiles.kind(of: url.path, inside: resolvedRoot) {
        case .success(.file): break
        case .success(.folder): throw ImportError.unreadable(path: url.path, reason: "it is a folder, not a file")
        case .success(.other(let what)): throw ImportError.unreadable(path: url.path, reason: "it is \(what), not a file")
        case .failure(let failure):
            if failure.isMissing { return nil }
            throw ImportError.unreadable(path: url.path, reason: failure.reason)
        }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw ImportError.unreadable(path: url.path, reason: ExportFiles.reason(for: error))
        }
    }

    func hasListing(_ name: String) -> Bool {
        let kind = ExportFiles.kind(of: root.appendingPathComponent(name).path, inside: resolvedRoot)
        if case .failure(let failure) = kind, failure.isMissing { return false }
        return true
    }

    func read(_ entry: DayFileEntry) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: displayPath(of: entry)))
        } catch {
            throw ImportError.unreadable(path: displayPath(of: entry), reason: ExportFiles.reason(for: error))
        }
    }
}
