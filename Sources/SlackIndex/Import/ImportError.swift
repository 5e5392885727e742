import Foundation

/// Why an import could not start or a file could not be read. `description` is what the user sees.
public enum ImportError: Error, CustomStringConvertible, Sendable {
    /// The path does not exist.
    case missing(path: String)
    /// The path exists but is neither an export folder, an export zip nor sync pages.
    case notAnExport(path: String)
    /// The file or folder could not be read.
    case unreadable(path: String, reason: String)
    /// The file is not valid JSON of the expected shape.
    case malformedJSON(path: String, reason: String)
    /// `copy --as USER` names no user of the source archive.
    case unknownCopyUser(String)

    public var description: String {
        switch self {
        case .missing(let path):
            "'\(path)' does not exist. Pass the export's .zip file or the folder it was unpacked into."
        case .notAnExport(let path):
            "'\(path)' is not a Slack export: no channels.json, users.json or conversation folders with "
                + "YYYY-MM-DD.json day files were found. "
                + (Self.sourcesInside(path).map { "It holds \($0.joined(separator: ", ")): import those instead." }
                    ?? "Pass the export's .zip file or its unpacked folder.")
        case .unreadable(let path, let reason):
            "Could not read \(path): \(reason)."
        case .malformedJSON(let path, let reason):
            "Could not read \(path): it is not valid Slack JSON (\(reason))."
        case .unknownCopyUser(let id):
            "No user with id '\(id)' in the archive to copy: --as takes a member's id (`slackindex users` lists them)."
        }
    }

    /// The zips and the export or page folders directly inside `folder` (`sample-data/` holds `export/`,
    /// `export.zip` and `pages/`), for the message that names what to import instead; nil when there are none.
    static func sourcesInside(_ folder: String) -> [String]? {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: folder) else { return nil }
        let found = names.sorted().filter { name in
            let path = folder + "/" + name
            var isDirectory: ObjCBool = false
            guard !name.hasPrefix("."), fm.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
            if !isDirectory.boolValue { return name.lowercased().hasSuffix(".zip") }
            return ["channels.json", "users.json", "manifest.json"].contains { fm.fileExists(atPath: path + "/" + $0) }
        }
        let shown = found.prefix(5).map { (folder.hasSuffix("/") ? folder : folder + "/") + $0 }
        return shown.isEmpty ? nil : shown + (found.count > 5 ? ["\(found.count - 5) more"] : [])
    }
}
