import SlackIndex

/// The exit statuses every command shares (the README's "Exit status" table); commands document their own use
/// of 1 and 2 in their help.
enum ExitStatus {
    /// Something went wrong, or (search, conversations) nothing was found.
    static let failure: Int32 = 1
    /// Done in part (files or messages skipped, gaps), or no archive to read.
    static let partial: Int32 = 2
    /// The command line is wrong: an unknown command or flag, a bad value, an empty query (sysexits' EX_USAGE,
    /// as argument-parser uses for its own validation errors).
    static let usage: Int32 = 64
    /// Stopped by Ctrl-C (128 + SIGINT) after saving what was done.
    static let interrupted: Int32 = 130
}

/// A library error told in this command line's terms: the library speaks of archives, paths and options; the
/// CLI says which flag, variable or command does it.
struct CommandError: Error, CustomStringConvertible {
    var description: String
    /// The exit status: 1 for most errors; 2 when there is no archive to read.
    var status: Int32 = 1

    /// `error` with what to do about it on the command line, or `error` itself when there is nothing to add.
    static func explained(_ error: any Error) -> any Error {
        switch error {
        case StoreError.cannotOpen(let path, _) where Archive.isDatabaseServer(path):
            // The store's words already name the server and database (never the password) and what to check.
            CommandError(description: "\(error) (--db or SLACKINDEX_DB)")
        case StoreError.cannotOpen(let path, let reason):
            CommandError(
                description: "Could not open the archive at \(path): \(reason). Check the path (--db or "
                    + "SLACKINDEX_DB) and that you may read it (and write it and its folder, for import, sync and token).")
        case StoreError.conversationNotFound(let name, let closest), SearchError.unknownConversation(let name, let closest):
            CommandError(
                description: "No conversation called '\(name)' in the archive"
                    + (closest.isEmpty ? "." : "; did you mean \(closest.joined(separator: ", "))?")
                    + " `slackindex conversations` lists them all (names with or without #, or ids).")
        case SearchError.unknownUser(let name, let closest):
            CommandError(
                description: "No user called '\(name)' in the archive"
                    + (closest.isEmpty ? "." : "; did you mean \(closest.joined(separator: ", "))?")
                    + " `slackindex users` lists them all (handles, names or ids).")
        case StoreError.noArchive:
            CommandError(description: "\(error)", status: ExitStatus.partial)
        case SearchError.nothingToSearch:
            CommandError(description: "\(error)", status: ExitStatus.usage)
        case SearchError.meUnknown:
            CommandError(
                description: "'me' needs to know who you are: pass --me HANDLE, set SLACKINDEX_ME, or put "
                    + "{\"me\": \"HANDLE\"} in ~/.config/slackindex/config.json.")
        case TokenError.unknownUser(let id):
            CommandError(
                description: "No user with id '\(id)' in the archive. A token acts as one of the archive's users: "
                    + "`slackindex users` lists them (ids and handles); pass one of them to --user.")
        case TokenError.unknownToken(let id):
            CommandError(description: "No token with id \(id). `slackindex token list` shows the tokens there are.")
        default:
            // What SQLite reports in its own words (a full disk during a token's write, a listing, a busy lock).
            StoreError.told(error, path: GlobalArguments.databasePath).map { $0 as any Error } ?? error
        }
    }
}
