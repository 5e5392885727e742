/// What one import did: counts of what was added, updated, left unchanged and skipped, with reasons.
public struct ImportSummary: Sendable, Codable, Equatable {
    /// A file that was not imported, and why.
    public struct SkippedFile: Sendable, Codable, Equatable {
        public var path: String
        public var reason: String
    }

    public var sources: [String] = []
    public var conversationsAdded = 0
    public var conversationsUpdated = 0
    public var conversationsUnchanged = 0
    public var usersAdded = 0
    public var usersUpdated = 0
    public var placeholderUsers = 0
    public var messagesAdded = 0
    public var messagesUpdated = 0
    public var messagesUnchanged = 0
    public var messagesSkipped = 0
    /// Messages kept with their text repaired: characters that could not be stored (control bytes JSON forbids,
    /// invalid UTF-8, lone surrogates, NUL) became U+FFFD, the rest of the text as written.
    public var messagesRepaired = 0
    /// Why messages were skipped, with counts (e.g. `"no ts": 3`).
    public var skipReasons: [String: Int] = [:]
    /// Files that could not be imported (malformed JSON, unreadable, corrupt zip entry).
    public var skippedFiles: [SkippedFile] = []
    /// Files inside conversation folders that are not day files (canvases, notes): listed, not imported.
    public var ignoredFiles: [String] = []
    /// Why the import stopped before its end (a full disk, a failed write), what stays and what to do; nil when it
    /// ran to the end. The counts are then what was committed.
    public var stopped: String?
    /// Stopped on request (Ctrl-C) after committing what was read so far; the same import run again adds the rest.
    public var interrupted = false
    /// Notes for the user (e.g. a folder no listing mentions, imported as a channel).
    public var notes: [String] = []
    /// The files the export carried beside its messages (slackdump's `__uploads/`), stored; nil when it carried none.
    public var attachedFiles: AttachedFilesSummary?
    /// What a dump's files were recognised as, with counts (e.g. `"API pages": 120, "id maps": 1`).
    public var recognised: [String: Int] = [:]
    public var dayFiles = 0
    public var bytes: Int64 = 0
    public var seconds: Double = 0
    /// Seconds spent in each phase (reader thread: read, decode, normalise; writer thread: write), which overlap.
    public var phases = ImportPhases()

    public init() {}

    /// Messages read from the sources (added, updated or unchanged).
    public var messagesRead: Int { messagesAdded + messagesUpdated + messagesUnchanged }

    /// True when something was skipped (exit status 2).
    public var hasSkips: Bool { messagesSkipped > 0 || !skippedFiles.isEmpty }

    mutating func recognise(_ kind: String, count: Int = 1) {
        recognised[kind, default: 0] += count
    }

    mutating func skipMessage(_ reason: String, count: Int = 1) {
        messagesSkipped += count
        skipReasons[reason, default: 0] += count
    }

    /// Adds what one store write did.
    mutating func add(_ counts: WriteCounts) {
        messagesAdded += counts.added
        messagesUpdated += counts.updated
        messagesUnchanged += counts.unchanged
        placeholderUsers += counts.placeholders
    }

    /// The message and placeholder counts as the store counts writes.
    var writeCounts: WriteCounts {
        var counts = WriteCounts()
        counts.added = messagesAdded
        counts.updated = messagesUpdated
        counts.unchanged = messagesUnchanged
        counts.placeholders = placeholderUsers
        return counts
    }

    mutating func merge(_ other: ImportSummary) {
        sources += other.sources
        conversationsAdded += other.conversationsAdded
        conversationsUpdated += other.conversationsUpdated
        conversationsUnchanged += other.conversationsUnchanged
        usersAdded += other.usersAdded
        usersUpdated += other.usersUpdated
        placeholderUsers += other.placeholderUsers
        messagesAdded += other.messagesAdded
        messagesUpdated += other.messagesUpdated
        messagesUnchanged += other.messagesUnchanged
        messagesSkipped += other.messagesSkipped
        messagesRepaired += other.messagesRepaired
        for (reason, count) in other.skipReasons { skipReasons[reason, default: 0] += count }
        skippedFiles += other.skippedFiles
        ignoredFiles += other.ignoredFiles
        notes += other.notes
        if let theirs = other.attachedFiles {
            var mine = attachedFiles ?? AttachedFilesSummary()
            mine.add(theirs)
            attachedFiles = mine
        }
        for (kind, count) in other.recognised { recognised[kind, default: 0] += count }
        stopped = stopped ?? other.stopped
        interrupted = interrupted || other.interrupted
        dayFiles += other.dayFiles
        bytes += other.bytes
        seconds += other.seconds
        phases.add(other.phases)
    }

    private enum CodingKeys: String, CodingKey {
        case sources
        case conversationsAdded = "conversations_added"
        case conversationsUpdated = "conversations_updated"
        case conversationsUnchanged = "conversations_unchanged"
        case usersAdded = "users_added"
        case usersUpdated = "users_updated"
        case placeholderUsers = "placeholder_users"
        case messagesAdded = "messages_added"
        case messagesUpdated = "messages_updated"
        case messagesUnchanged = "messages_unchanged"
        case messagesSkipped = "messages_skipped"
        case messagesRepaired = "messages_repaired"
        case skipReasons = "skip_reasons"
        case skippedFiles = "skipped_files"
        case ignoredFiles = "ignored_files"
        case notes
        case attachedFiles = "attached_files"
        case recognised
        case stopped
        case interrupted
        case dayFiles = "day_files"
        case bytes
        case seconds
        case phases
    }
}

/// Time per import phase, in seconds. Reading and writing run on two threads at once, so they overlap.
public struct ImportPhases: Sendable, Codable, Equatable {
    /// Reading files and inflating zip entries.
    public var read: Double = 0
    /// Minifying and decoding JSON.
    public var decode: Double = 0
    /// Normalising mrkdwn, building rows.
    public var normalise: Double = 0
    /// SQLite writes of rows, reactions and files (and the WAL).
    public var write: Double = 0
    /// Adding messages to the full-text index (part of the writer thread's time, not in `write`).
    public var index: Double = 0
    /// Waiting for the WAL to be copied into the database file (part of the writer thread's time).
    public var checkpoint: Double = 0

    public init() {}

    mutating func add(_ other: ImportPhases) {
        read += other.read
        decode += other.decode
        normalise += other.normalise
        write += other.write
        index += other.index
        checkpoint += other.checkpoint
    }
}

/// How far an import has got, for progress displays.
public struct ImportProgress: Sendable {
    public var bytesDone: Int64
    public var bytesTotal: Int64
    public var messagesDone: Int
    public var filesDone: Int
    public var filesTotal: Int
    public var elapsed: Double

    /// Messages per second so far.
    public var rate: Double { elapsed > 0 ? Double(messagesDone) / elapsed : 0 }
    /// Seconds left, estimated from bytes.
    public var eta: Double? {
        guard bytesDone > 0, bytesTotal > bytesDone, elapsed > 0.5 else { return nil }
        return elapsed * Double(bytesTotal - bytesDone) / Double(bytesDone)
    }
}
