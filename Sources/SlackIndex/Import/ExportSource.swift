import Foundation

/// One day file of one conversation folder inside an export.
struct DayFileEntry: Sendable {
    /// The conversation folder (channel name, DM id, group DM name).
    var folder: String
    /// The file name, e.g. `2024-01-15.json`.
    var name: String
    /// Uncompressed size in bytes (for progress).
    var size: Int64
    /// Where the file is, as a person would name it (`export.zip:general/2024-01-15.json`).
    var displayPath: String
}

/// One protocol over folder and zip exports: listing files by name, and the day files in order.
///
/// Implementations are used by one thread at a time (the importer hands a source to its reader thread).
protocol ExportSource: Sendable {
    /// The export's path, for messages.
    var path: String { get }
    /// Reads a top-level file (`users.json`, `channels.json`…); nil when the export has none.
    func listing(_ name: String) throws -> Data?
    /// The day files, sorted by folder then date.
    var dayFiles: [DayFileEntry] { get }
    /// Other files found inside conversation folders that are not day files (reported, not imported).
    var ignoredFiles: [String] { get }
    /// The names of the top-level folders.
    var folders: [String] { get }
    /// Reads a day file's bytes.
    func read(_ entry: DayFileEntry) throws -> Data
}

/// A day file's name: `YYYY-MM-DD.json`.
func isDayFileName(_ name: String) -> Bool {
    let bytes = Array(name.utf8)
    guard bytes.count == 15, name.hasSuffix(".json") else { return false }
    for (index, byte) in bytes.prefix(10).enumerated() {
        if index == 4 || index == 7 {
            guard byte == UInt8(ascii: "-") else { return false }
        } else {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return false }
        }
    }
    return true
}

/// The top-level files an export may hold; their presence tells an export from other folders.
let exportListingNames = [
    "users.json", "org_users.json", "channels.json", "groups.json", "dms.json", "mpims.json",
]

/// An export unpacked into a folder.
struct FolderExportSource: ExportSource {
    let path: String
    let root: URL
    let dayFiles: [DayFileEntry]
    let ignoredFiles: [String]
    let folders: [String]

    init(path: String) throws {
        self.path = path
        root = URL(fileURLWithPath: path, isDirectory: true)
        let fm = FileManager.default
        let top: [String]
        do {
            top = try fm.contentsOfDirectory(atPath: path).sorted()
        } catch {
            throw ImportError.unreadable(path: path, reason: error.localizedDescription)
        }
        var days: [DayFileEntry] = []
        var ignored: [String] = []
        var folders: [String] = []
        for folder in top {
            var isDirectory: ObjCBool = false
            let folderPath = root.appendingPathComponent(folder).path
            guard fm.fileExists(atPath: folderPath, isDirectory: &isDirectory), isDirectory.boolValue else {
                continue
            }
            guard !folder.hasPrefix(".") else { continue }
            folders.append(folder)
            let names = (try? fm.contentsOfDirectory(atPath: folderPath)) ?? []
            for name in names.sorted() {
                let filePath = folderPath + "/" + name
                if isDayFileName(name) {
                    let size = (try? fm.attributesOfItem(atPath: filePath)[.size] as? NSNumber)?.int64Value ?? 0
                    days.append(
                        DayFileEntry(folder: folder, name: name, size: size, displayPath: filePath))
                } else {
                    ignored.append(filePath)
                }
            }
        }
        dayFiles = days
        ignoredFiles = ignored
        self.folders = folders
    }

    func listing(_ name: String) throws -> Data? {
        let url = root.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw ImportError.unreadable(path: url.path, reason: error.localizedDescription)
        }
    }

    func read(_ entry: DayFileEntry) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: entry.displayPath))
        } catch {
            throw ImportError.unreadable(path: entry.displayPath, reason: error.localizedDescription)
        }
    }
}
