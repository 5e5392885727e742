import ArgumentParser
import Foundation
import SlackIndex

/// Options every command accepts, before or after the subcommand's name.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The archive: an SQLite file, or postgresql://USER@HOST:PORT/DB (every command but files and check; "
                + "docs/postgresql.md) (default: $SLACKINDEX_DB, else $XDG_DATA_HOME/slackindex/archive.sqlite).",
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
    /// read-only file, folder or mount works). A write-open that upgraded an archive of an older version says how
    /// to give the old layout's space back (`upgrade` does that itself, `vacuumHint: false`).
    /// - Parameter replica: a PostgreSQL hot standby for reads (`serve --replica`).
    func openArchive(_ access: Archive.Access = .readWrite, vacuumHint: Bool = true, replica: String? = nil) throws
        -> Archive
    {
        let archive = try Archive(path: databasePath, access: access, replica: replica)
        if archive.store.upgradedOnOpen && vacuumHint {
            Output.error(
                "note: the archive was upgraded for this version; `slackindex upgrade --vacuum` gives the space its "
                    + "old layout took back to the disk.")
        }
        return archive
    }

    /// Opens an archive that must already exist, read-write: for commands that write to what an import made
    /// (`serve`, `token`) and must not leave an empty archive behind when pointed at the wrong path.
    func openExistingArchive(vacuumHint: Bool = true, replica: String? = nil) throws -> Archive {
        guard Archive.isDatabaseServer(databasePath) || FileManager.default.fileExists(atPath: databasePath) else {
            throw StoreError.noArchive(path: databasePath)
        }
        return try openArchive(vacuumHint: vacuumHint, replica: replica)
    }
}

/// `--jobs N` of the commands that write messages (`import`, `copy`).
struct WriterOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Connections writing messages at once, each taking its share of the conversations: PostgreSQL takes "
                + "several writers (an SQLite archive has one).",
            valueName: "n"))
    var jobs = 1

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs takes a number of connections, 1 or more.") }
    }

    /// Refuses more than one writer into an archive that takes one (SQLite).
    func check(into location: String) throws {
        guard jobs == 1 || Archive.isDatabaseServer(location) else {
            throw ValidationError("--jobs \(jobs) needs a PostgreSQL archive: an SQLite archive takes one writer.")
        }
    }
}

/// `--workspace` of the commands that read (`search`, `history`, `conversations`, `stats`): one workspace of an
/// archive that holds several.
struct WorkspaceOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Only this workspace of the archive: its team id, domain or name (`slackindex stats` lists them).",
            valueName: "workspace"))
    var workspace: String?

    /// The workspace named, resolved once; nil without `--workspace`.
    ///
    /// - Throws: `WorkspaceError` for a workspace the archive does not hold (listing those it does) or several.
    func filter(in archive: Archive) throws -> WorkspaceFilter? {
        try workspace.map { try WorkspaceFilter($0, in: archive.store) }
    }
}
