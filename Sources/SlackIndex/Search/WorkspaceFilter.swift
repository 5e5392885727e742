import Foundation

/// One workspace of the archive, named by its team id, domain or name, with the row ids of its conversations: what
/// `--workspace` (and `serve`'s `team_id`) restricts searches, listings, counts and conversation names to.
///
/// Resolved once per command or request. A search takes `conversations` as the set its hits must lie in
/// (`SearchOptions.restrict(to:)`), the same set a token's visible conversations are, so the engine has one
/// conversation filter, not two.
package struct WorkspaceFilter: Sendable {
    package var workspace: WorkspaceInfo
    /// Row ids of the workspace's conversations.
    package var conversations: Set<Int64>

    /// The workspace `reference` names: a team id (`T0XE4G87218`) first, since those are unique, else a domain
    /// (`acme`), else a name; case ignored.
    ///
    /// - Throws: `WorkspaceError.unknown` listing the archive's workspaces; `.ambiguous` listing those that match
    ///   when a domain or name is shared.
    /// - Complexity: O(w + c) for w workspaces and c conversations.
    package init(_ reference: String, in archive: any Directory) throws {
        let all = try archive.workspaces()
        let key = reference.trimmingCharacters(in: .whitespaces)
        func same(_ text: String?) -> Bool { text.map { $0.caseInsensitiveCompare(key) == .orderedSame } ?? false }
        var found = all.filter { same($0.teamID) }
        if found.isEmpty { found = all.filter { same($0.domain) } }
        if found.isEmpty { found = all.filter { same($0.name) } }
        guard let workspace = found.first else {
            throw WorkspaceError.unknown(reference, workspaces: all.map(WorkspaceError.shown))
        }
        guard found.count == 1 else {
            throw WorkspaceError.ambiguous(reference, candidates: found.map(WorkspaceError.shown))
        }
        self.workspace = workspace
        conversations = try archive.conversationRowIDs(workspace: workspace.teamID)
    }

    /// The conversation `reference` names among this workspace's conversations, read as the archive reads names
    /// (`#name`, `name`, export folder, id, `acme/#name`, else a unique start of a name): `general` is this
    /// workspace's #general when another workspace holds one too.
    ///
    /// - Throws: `StoreError.conversationNotFound` (with the closest names) when no conversation anywhere has the
    ///   name; `.ambiguousConversation` when several of this workspace's do; `WorkspaceError.notInWorkspace` when
    ///   only other workspaces' do.
    /// - Complexity: O(c) over the conversations.
    package func conversation(named reference: String, in archive: any Directory) throws -> Conversation {
        let bare = reference.hasPrefix("#") ? String(reference.dropFirst()) : reference
        var found = try archive.conversations(matching: bare).filter { conversations.contains($0.rowID) }
        if found.isEmpty {
            found = try archive.conversations(withNamePrefix: bare).filter { conversations.contains($0.rowID) }
        }
        if found.count == 1 { return found[0] }
        if found.count > 1 {
            throw StoreError.ambiguousConversation(reference, candidates: found.map { "\($0.displayName) (\($0.id))" })
        }
        // None here: the archive-wide lookup tells a name held nowhere (with the closest ones) from another's.
        do {
            let elsewhere = try archive.conversation(named: reference, allowingPrefix: true)
            throw WorkspaceError.notInWorkspace(elsewhere.displayName, workspace: WorkspaceError.shown(workspace))
        } catch StoreError.ambiguousConversation(_, _) {
            throw WorkspaceError.notInWorkspace(reference, workspace: WorkspaceError.shown(workspace))
        }
    }
}

extension WorkspaceCount {
    /// Every workspace of the archive with its conversations and messages (not deleted), in import order.
    ///
    /// - Complexity: O(w × c) for w workspaces and c conversations.
    package static func all(in archive: any Directory) throws -> [WorkspaceCount] {
        let counts = try archive.messageCountsByConversation()
        return try archive.workspaces().map { workspace in
            let ids = try archive.conversationRowIDs(workspace: workspace.teamID)
            return WorkspaceCount(
                workspace: workspace, conversations: ids.count, messages: ids.reduce(0) { $0 + (counts[$1] ?? 0) })
        }
    }
}

/// Why a workspace filter cannot be applied; `description` is what the user sees.
package enum WorkspaceError: Error, CustomStringConvertible, Sendable {
    /// No workspace has that team id, domain or name; `workspaces` are the archive's, as `shown` writes them.
    case unknown(String, workspaces: [String])
    case ambiguous(String, candidates: [String])
    /// The conversation named is another workspace's.
    case notInWorkspace(String, workspace: String)

    package var description: String {
        switch self {
        case .unknown(let name, let workspaces) where workspaces.isEmpty:
            "No workspace called '\(name)': the archive holds no workspace yet (an export's or a sync's)."
        case .unknown(let name, let workspaces):
            "No workspace called '\(name)' in the archive; it holds \(workspaces.joined(separator: ", ")). "
                + "Name one by its team id, domain or name."
        case .ambiguous(let name, let candidates):
            "'\(name)' names several workspaces: \(candidates.joined(separator: ", ")). Use one's team id."
        case .notInWorkspace(let conversation, let workspace):
            "\(conversation) is not in the workspace \(workspace); leave the workspace out, or name one of its "
                + "conversations."
        }
    }

    /// A workspace as errors list it: its name, then its domain when that differs, and its team id
    /// (`acme (T0XE4G87218)`, `Acme Corp (acme, T0XE4G87218)`).
    static func shown(_ w: WorkspaceInfo) -> String {
        let domain = w.domain.flatMap { $0.isEmpty || $0 == w.shownName ? nil : $0 }
        return "\(w.shownName) (" + [domain, w.teamID].compactMap { $0 }.joined(separator: ", ") + ")"
    }
}
