import Foundation

/// Local and remote search together: the merge policy and the remote deadline.
public struct MergedSearchResults: Sendable {
    /// Merged hits (see ``ResultMerger``), each with its ``SearchHit/source``.
    public var hits: [SearchHit]
    /// Notes from the local engine, plus a local failure when only the remote could answer.
    public var notes: [String]
    /// True when the remote's answer is missing (slow, failing, rate-limited, unreachable): hits are local only.
    public var partial: Bool
    /// What happened to the remote, one sentence, when `partial`.
    public var remoteProblem: String?
    /// Hits each side returned before the merge.
    public var localCount: Int
    public var remoteCount: Int
    /// Remote hits stored in the archive (`saveRemote`).
    public var saved: Int
    /// Why the remote hits could not be stored (`saveRemote`: a read-only archive, a full disk), one sentence; the
    /// hits are shown all the same.
    public var saveProblem: String?
    /// How long the local search took (it runs while the remote request is in flight; when it alone outlasts the
    /// deadline, the answer comes when it is done).
    public var localDuration: Duration = .zero
}

extension SearchEngine {
    /// Runs `text` locally and on `remote` concurrently and merges the answers; never waits past `deadline`.
    ///
    /// The local search runs while the remote request is in flight. When the remote has not answered by the
    /// deadline (measured from the call), or fails, the local hits come back alone with `partial` set and
    /// `remoteProblem` saying why; the remote request is cancelled (a `RemoteSearch` must stop promptly when its
    /// task is cancelled, as AsyncHTTPClient requests and `Task.sleep` do). Remote hits the archive holds are shown with
    /// the archive's message and marked `both`. With `saveRemote`, remote hits not yet in the archive are stored
    /// (their conversation is created if needed), so they are there offline next time.
    ///
    /// - Throws: `SearchError` when the local query is unusable and the remote gave nothing either.
    /// - Complexity: the local search's, plus O(r) archive lookups for r remote hits.
    public func search(
        _ text: String, options: SearchOptions, remote: any RemoteSearch, deadline: Duration,
        saveRemote: Bool = false
    ) async throws -> MergedSearchResults {
        try await search(
            parse(text, options: options), text: text, options: options, remote: remote, deadline: deadline,
            saveRemote: saveRemote)
    }

    /// `search(_:options:remote:deadline:saveRemote:)` for a parsed query; `text` is what the user typed.
    package func search(
        _ query: SearchQuery, text: String, options: SearchOptions, remote: any RemoteSearch, deadline: Duration,
        saveRemote: Bool = false
    ) async throws -> MergedSearchResults {
        let until = ContinuousClock.now + deadline
        guard !query.isEmpty else { throw SearchError.nothingToSearch(text) }
        let (outcome, (local, localDuration)) = await Self.askRemote(
            remote, query, limit: options.limit, sort: options.sort, until: until
        ) {
            let localStart = ContinuousClock.now
            // No "did you mean" here: the remote's hits may well answer the query, and the deadline is short.
            var localOptions = options
            localOptions.suggest = false
            let local = Result { try self.search(query, text: text, options: localOptions) }
            return (local, ContinuousClock.now - localStart)
        }
        var notes = (try? local.get().notes) ?? []
        let localHits = (try? local.get().hits) ?? []
        var remoteHits: [SearchHit] = []
        var problem: String?
        var saved = 0
        var saveProblem: String?
        switch outcome {
        case .answered(let page):
            let found = try hits(of: page, saveRemote: saveRemote)
            (remoteHits, saved, saveProblem) = (found.hits, found.saved, found.saveProblem)
        case .failed(let error):
            problem = Self.describe(error, deadline: deadline)
        case .timedOut:
            problem = "the remote did not answer within \(Self.format(deadline)); showing local results."
        }
        if case .failure(let error) = local {
            guard problem == nil else { throw error }
            notes.append("Locally: \((error as? SearchError)?.description ?? "\(error)")")
        }
        // Local hits the remote also returned are `both`; remote ones the archive holds but local ranking left
        // out keep that mark too.
        let merged = ResultMerger.merge(local: localHits, remote: remoteHits, sort: options.sort, limit: options.limit)
        return MergedSearchResults(
            hits: merged, notes: notes, partial: problem != nil, remoteProblem: problem, localCount: localHits.count,
            remoteCount: remoteHits.count, saved: saved, saveProblem: saveProblem, localDuration: localDuration)
    }

    /// A remote answer's hits as the archive shows them: a hit the archive holds is its archived message, marked
    /// `both`; any other is built from the remote's fields, marked `remote` (stored first with `saveRemote`, so it
    /// is there offline next time). Hits with a ts that is not one are left out.
    ///
    /// - Returns: the hits in the remote's order, how many were stored, and why storing failed (the hits stand).
    /// - Complexity: O(r log n) for r hits.
    package func hits(
        of page: RemotePage, saveRemote: Bool
    ) throws -> (hits: [SearchHit], saved: Int, saveProblem: String?) {
        let known = try archive.conversations()
        let names = Dictionary(known.map { ($0.id, $0.displayName) }, uniquingKeysWith: { a, _ in a })
        let byID = Dictionary(known.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        // Remote hits the archive lacks show their author as local hits do (display name, not handle) when the
        // archive knows the user.
        let shownNames = try archive.archivedUsers(ids: Set(page.hits.compactMap(\.userID))).mapValues(\.user.bestName)
        var remoteHits: [SearchHit] = []
        var missing: [RemoteHit] = []
        for hit in page.hits {
            guard let tsKey = SlackTimestamp.parseKey(hit.ts) else { continue }
            if let conversation = byID[hit.conversationID],
                let message = try archive.message(conversation: conversation, tsKey: tsKey), !message.isDeleted
            {
                remoteHits.append(
                    SearchHit(message: message, snippet: hit.snippet, score: 0, source: .both, remotePermalink: hit.permalink))
                continue
            }
            missing.append(hit)
            let message = Message(
                rowID: 0, conversationID: hit.conversationID,
                conversation: names[hit.conversationID] ?? hit.conversationName.map { "#" + $0 } ?? hit.conversationID,
                ts: hit.ts, tsKey: tsKey, userID: hit.userID,
                user: hit.userID.flatMap { shownNames[$0] } ?? hit.username ?? hit.userID, text: hit.text,
                plainText: hit.text, subtype: nil, threadTS: nil, replyCount: 0, editedTS: nil, isDeleted: false,
                flags: [])
            remoteHits.append(
                SearchHit(message: message, snippet: hit.snippet, score: 0, source: .remote, remotePermalink: hit.permalink))
        }
        guard saveRemote, !missing.isEmpty else { return (remoteHits, 0, nil) }
        do {
            return (remoteHits, try Importer(store: archive).storeRemoteHits(missing), nil)
        } catch {
            let told = StoreError.told(error, path: archive.path).map { "\($0)" } ?? "\(error)"
            return (remoteHits, 0, "the remote hits could not be stored: \(told)")
        }
    }

    /// Asks `remote` while `meanwhile` runs (the local search) and returns the first of the remote's answer, its
    /// failure and `until`, with what `meanwhile` gave; the remote request is cancelled when the deadline wins.
    ///
    /// The request and the deadline timer are child tasks (they inherit the caller's executor preference);
    /// `meanwhile` runs in this task.
    package static func askRemote<T>(
        _ remote: any RemoteSearch, _ query: SearchQuery, limit: Int, sort: SearchSort, until: ContinuousClock.Instant,
        meanwhile: () async -> T
    ) async -> (RemoteOutcome, T) {
        await withTaskGroup(of: RemoteOutcome?.self) { group -> (RemoteOutcome, T) in
            group.addTask {
                do {
                    return .answered(try await remote.search(query, limit: limit, sort: sort))
                } catch {
                    return .failed(error)
                }
            }
            group.addTask {
                do {
                    try await Task.sleep(until: until, clock: .continuous)
                    return .timedOut
                } catch {
                    return nil
                }
            }
            let value = await meanwhile()
            var first = RemoteOutcome.timedOut
            while let next = await group.next() {
                if let next {
                    first = next
                    break
                }
            }
            group.cancelAll()
            return (first, value)
        }
    }

    /// How a remote search ended.
    package enum RemoteOutcome: Sendable {
        case answered(RemotePage)
        case failed(any Error)
        case timedOut
    }

    /// Why a remote gave no hits, one sentence that ends "showing local results."
    package static func describe(_ error: any Error, deadline: Duration) -> String {
        switch error {
        case RemoteError.rateLimited(_, let seconds):
            "the remote is rate-limited (Retry-After \(seconds) s); showing local results."
        case RemoteError.unavailable(_, _, let last):
            "the remote failed (\(last)); showing local results."
        case RemoteError.api(_, let code):
            "the remote answered '\(code)'; showing local results."
        case RemoteError.http(_, let status):
            "the remote answered HTTP \(status); showing local results."
        case RemoteError.unreachable(let url, let reason):
            "the remote \(url) cannot be reached (\(reason)); showing local results."
        case is CancellationError:
            "the remote did not answer within \(format(deadline)); showing local results."
        default:
            "the remote failed (\(error)); showing local results."
        }
    }

    package static func format(_ duration: Duration) -> String {
        String(format: "%.2g s", duration.seconds)
    }
}
