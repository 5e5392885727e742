import ArgumentParser
import Foundation
import SlackIndex

/// Options every command accepts, before or after the subcommand's name.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The archive database (default: $SLACKINDEX_DB, else $XDG_DATA_HOME/slackindex/archive.sqlite).",
            valueName: "path"))
    var db: String?

    @Option(
        help: ArgumentHelp(
            "Bold, dim and highlighted matches: auto (on a terminal unless NO_COLOR is set), always or never.",
            valueName: "when"))
    var color: ColorChoice = .auto

    enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    /// The database path in force.
    var databasePath: String { db ?? Archive.defaultPath() }

    /// Opens the archive: read-only for commands that only read (no file is created or migrated, and a
    /// read-only file, folder or mount works).
    func openArchive(_ access: Archive.Access = .readWrite) throws -> Archive {
        try Archive(path: databasePath, access: access)
    }

    /// Opens an archive that must already exist, read-write: for commands that write to what an import made
    /// (`serve`, `token`) and must not leave an empty archive behind when pointed at the wrong path.
    func openExistingArchive() throws -> Archive {
        guard FileManager.default.fileExists(atPath: databasePath) else { throw StoreError.noArchive(path: databasePath) }
        return try openArchive()
    }
}
