import Foundation

/// An export's listing files: `users.json` / `org_users.json` and the four conversation listings.
struct ExportListings {
    var users: [UserRecord] = []
    var conversations: [(record: ConversationRecord, kind: ConversationKind)] = []

    /// The listing files that name conversations, and the kind each holds.
    static let conversationListings: [(file: String, kind: ConversationKind)] = [
        ("channels.json", .channel), ("groups.json", .private), ("dms.json", .dm), ("mpims.json", .mpim),
    ]

    /// Reads the listings of `source`; a listing that cannot be read is reported in `summary` and counts as empty,
    /// and a record that cannot be read (wrong shape, nested too deep for `JSONDecoder`) is skipped and reported
    /// while the listing's other records are kept.
    init(source: any ExportSource, path: String, summary: inout ImportSummary) {
        func read<T: Decodable>(_ name: String, as type: T.Type) -> [T] {
            do {
                // Handed over, not kept here: `records` frees the file once it is sliced.
                guard let data = try source.listing(name) else { return [] }
                return Self.records(of: T.self, in: consume data, file: "\(path)/\(name)", summary: &summary)
            } catch let error as ImportError {
                summary.skippedFiles.append(.init(path: "\(path)/\(name)", reason: error.description))
            } catch {
                summary.skippedFiles.append(.init(path: "\(path)/\(name)", reason: "\(error)"))
            }
            return []
        }
        users = read("users.json", as: UserRecord.self) + read("org_users.json", as: UserRecord.self)
        for (file, kind) in Self.conversationListings {
            conversations += read(file, as: ConversationRecord.self).map { ($0, kind) }
        }
    }

    /// The records of a listing, decoded one element at a time (`JSONSlicer` finds the elements without
    /// recursion, so one record nested 100,000 deep costs only itself); what cannot be read is reported.
    ///
    /// `data` is freed once it is sliced (when the caller holds no other reference): the slicer's minified copy is
    /// what the records are decoded from, and a listing can be large (24 MB of `channels.json` for 300 channels
    /// of 10,000 users' members: the file, its copy and the records decoded so far were the import's peak).
    static func records<T: Decodable>(
        of type: T.Type, in data: consuming Data, file: String, summary: inout ImportSummary
    ) -> [T] {
        let sliced = data.withUnsafeBytes { JSONSlicer($0) }
        _ = consume data
        guard sliced.isArray, sliced.isComplete else {
            summary.skippedFiles.append(.init(path: file, reason: "it is not a complete JSON array"))
            return []
        }
        let decoder = JSONDecoder()
        var records: [T] = []
        records.reserveCapacity(sliced.elements.count)
        var failures: [(index: Int, reason: String)] = []
        for (index, range) in sliced.elements.enumerated() {
            // Newer exports write an empty listing as `[""]`: no record, nothing lost.
            if sliced.bytes[range].elementsEqual(#""""#.utf8) || sliced.bytes[range].elementsEqual("null".utf8) {
                continue
            }
            do {
                records.append(try decoder.decode(T.self, from: Data(sliced.bytes[range])))
            } catch {
                failures.append((index + 1, Importer.describe(error)))
            }
        }
        if let first = failures.first {
            summary.skippedFiles.append(
                .init(
                    path: file,
                    reason: "\(failures.count) of \(sliced.elements.count) records could not be read and were "
                        + "skipped (record \(first.index): \(first.reason)); the other records were imported"))
        }
        return records
    }

    /// The workspace: the team most users belong to (`local` when the export names none).
    var teamID: String {
        Importer.mostCommon(users.compactMap(\.teamID)) ?? "local"
    }

    /// The conversations to store: every listed one, plus one channel per day-file folder no listing names (with a
    /// note in `summary`).
    func conversationInputs(dayFolders: Set<String>, summary: inout ImportSummary) -> [ConversationInput] {
        let handles = Dictionary(users.map { ($0.id, $0.name ?? $0.id) }, uniquingKeysWith: { first, _ in first })
        var seenFolders = Set<String>()
        var inputs: [ConversationInput] = []
        for (record, kind) in conversations {
            let input = record.input(kind: kind, handles: handles, folder: true)
            if let folder = input.folder { seenFolders.insert(folder) }
            inputs.append(input)
        }
        for folder in dayFolders.subtracting(seenFolders).sorted() {
            summary.notes.append(
                "Folder '\(folder)' is not in any listing file; its messages were imported as channel '\(folder)'.")
            inputs.append(ConversationInput(slackID: folder, kind: .channel, name: folder, folder: folder))
        }
        return inputs
    }
}

extension UserRecord {
    /// The member as the store takes it.
    var input: UserInput {
        UserInput(
            id: id, teamID: teamID, handle: name ?? id, realName: realName, displayName: displayName, isBot: isBot,
            isDeleted: deleted, timeZone: timeZone, isPlaceholder: isPlaceholder, avatarURL: avatarURL)
    }
}

extension ConversationRecord {
    /// The kind an API record declares (`is_im`, `is_mpim`, `is_private`); a public channel otherwise.
    var declaredKind: ConversationKind {
        if isIM == true { return .dm }
        if isMPIM == true { return .mpim }
        if isPrivate == true { return .private }
        return .channel
    }

    /// The conversation as the store takes it. DMs are named after their members (`@alice, @bob`); with `folder`,
    /// the export folder is recorded (the id for DMs, the name otherwise).
    func input(kind: ConversationKind, handles: [String: String], folder: Bool, me: String? = nil) -> ConversationInput {
        var members = self.members
        let name: String
        if kind == .dm {
            if let me, !members.contains(me) { members.append(me) }
            name = ConversationInput.directMessageName(members: members, handles: handles)
        } else {
            name = self.name ?? id
        }
        let folderName = folder ? (kind == .dm ? id : name) : nil
        return ConversationInput(
            slackID: id, kind: kind, name: name, folder: folderName, created: created, topic: topic, purpose: purpose,
            isArchived: isArchived, members: members)
    }
}
