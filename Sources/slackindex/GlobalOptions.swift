import ArgumentParser
import SlackIndex

/// Options every command accepts, before or after the subcommand's name.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The archive database (default: $SLACKINDEX_DB, else $XDG_DATA_HOME/slackindex/archive.sqlite).",
            valueName: "path"))
    var db: String?

    /// The database path in force.
    var databasePath: String { db ?? Archive.defaultPath() }

    /// Opens the archive: read-only for commands that only read (no file is created or migrated, and a
    /// read-only file, folder or mount works).
    func openArchive(_ access: Archive.Access = .readWrite) throws -> Archive {
        try Archive(path: databasePath, access: access)
    }
}
