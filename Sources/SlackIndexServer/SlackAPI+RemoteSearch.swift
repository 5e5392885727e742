import Foundation
import NIOPosix
import SlackIndex
import Synchronization

/// What the remote gave a merged search: its hits as the archive shows them, or why there are none.
struct RemoteAnswer: Sendable {
    var hits: [SearchHit] = []
    /// Why the remote's hits are missing (slow, failing, refused), one sentence; nil when it answered.
    var problem: String?
}

extension SlackAPI {
    /// `search.messages` when `serve` has a remote: the first page is the archive's hits merged with the
    /// remote's, as `slackindex search --remote` merges them (reciprocal rank fusion, one per conversation and
    /// ts, each marked `local`, `remote` or `both` in `source`); later pages are the archive's alone, marked
    /// `local`.
    ///
    /// The remote request runs while the archive is searched and gets `remoteDeadline` from the call; when it
    /// is late or fails, the archive's hits come alone and `remote_problem` says why. Access: the remote answers
    /// with the server's own credentials, so a remote hit is kept only when the archive has its conversation and
    /// the token sees that conversation (a hit in a conversation the archive does not know is left out: nothing
    /// says who may read it). The first page keeps all the archive's hits of that page and adds the remote's that
    /// the archive does not have (so it may hold more than `count`); a remote hit the archive has but ranks on a
    /// later page stays there. `me` is the token's user for the remote too (the remote's own `me` would be the
    /// server's credential); a session without a user does not ask the remote for a query naming `me`. After
    /// the remote answers `ratelimited`, it is not asked again until its `Retry-After` has passed. `total` is
    /// the archive's count plus the remote-only hits on the page.
    /// - Complexity: that of `searchMessages`, plus O(r log n) archive lookups for the remote's r hits.
    func mergedSearch(parameters: [String: String], caller: APICaller, remote: any RemoteSearch) async
        -> SlackAPIResponse
    {
        let until = ContinuousClock.now + configuration.remoteDeadline
        // The token, the page and the parsed query first: they read the archive.
        let prepared = await onSearchThread {
            let request = APIRequest(parameters: parameters, token: try self.verifiedToken(caller))
            let page = try SearchPage(request, options: try self.searchOptions(request))
            return (page, self.engine.parse(page.query, options: page.options))
        }
        let page: SearchPage
        let query: SearchQuery
        switch prepared {
        case .failure(let error): return SlackAPI.respond { throw error }
        case .success(let value): (page, query) = value
        }
        guard page.number == 1, !query.isEmpty else {
            return await answered { try self.searchAnswer(page, hits: try self.localHits(page), remote: RemoteAnswer()) }
        }
        if let problem = remoteWaitProblem() {
            return await answered {
                try self.searchAnswer(page, hits: try self.localHits(page), remote: RemoteAnswer(problem: problem))
            }
        }
        guard let remoteQuery = query.replacingMe(with: page.token.userID.isEmpty ? nil : page.token.userID) else {
            let problem = "the remote was not asked: this session has no user for 'me' (serve --open --as NAME)."
            return await answered {
                try self.searchAnswer(page, hits: try self.localHits(page), remote: RemoteAnswer(problem: problem))
            }
        }
        let (outcome, local) = await SearchEngine.askRemote(
            remote, remoteQuery, limit: page.count, sort: page.options.sort, until: until
        ) {
            await onSearchThread { try self.localHits(page) }
        }
        return await answered {
            let found = try local.get()
            let remoteAnswer = self.remoteAnswer(outcome, for: page, shown: found.hits)
            let remoteOnly = remoteAnswer.hits.filter { $0.source == .remote }.count
            let merged = ResultMerger.merge(
                local: found.hits, remote: remoteAnswer.hits, sort: page.options.sort,
                limit: found.hits.count + remoteOnly)
            return try self.searchAnswer(
                page, hits: LocalHits(hits: merged, total: found.total + remoteOnly, estimated: found.estimated),
                remote: remoteAnswer)
        }
    }

    /// Why the remote is not asked now: it answered `ratelimited` and its `Retry-After` has not passed.
    private func remoteWaitProblem() -> String? {
        let until = remotePause.withLock { $0 }
        guard let until, until > ContinuousClock.now else { return nil }
        let seconds = max(1, Int((until - ContinuousClock.now).seconds.rounded(.up)))
        return "the remote is rate-limited for \(seconds) s more; showing local results."
    }

    /// The remote's outcome as hits to merge into `shown` (the archive's hits on the page), or the problem: hits
    /// the token may see, either not in the archive or among `shown`. A failure to read them is a problem too.
    private func remoteAnswer(_ outcome: SearchEngine.RemoteOutcome, for page: SearchPage, shown: [SearchHit])
        -> RemoteAnswer
    {
        switch outcome {
        case .answered(let remotePage):
            let onPage = Set(shown.map { "\($0.message.conversationID) \($0.message.ts)" })
            do {
                let hits = try engine.hits(of: remotePage, saveRemote: false).hits.filter { hit in
                    guard hit.source == .remote || onPage.contains("\(hit.message.conversationID) \(hit.message.ts)")
                    else { return false }
                    return try archive.visibleConversation(id: hit.message.conversationID, to: page.token) != nil
                }
                return RemoteAnswer(hits: hits)
            } catch {
                return RemoteAnswer(problem: "the remote's results could not be matched with the archive (\(error)).")
            }
        case .failed(let error):
            if case RemoteError.rateLimited(_, let seconds) = error {
                let until = ContinuousClock.now + .seconds(max(1, min(seconds, 3_600)))
                remotePause.withLock { $0 = max($0 ?? until, until) }
            }
            return RemoteAnswer(problem: SearchEngine.describe(error, deadline: configuration.remoteDeadline))
        case .timedOut:
            // Described as a cancelled request is: "did not answer within …".
            return RemoteAnswer(problem: SearchEngine.describe(CancellationError(), deadline: configuration.remoteDeadline))
        }
    }

    /// `work` on a search thread (the archive's reads block).
    private func onSearchThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async -> Result<T, any Error> {
        do {
            return try await searchPool.runIfActive { Result { try work() } }
        } catch {
            return .failure(error)
        }
    }

    /// `work`'s answer, made on a search thread.
    private func answered(_ work: @escaping @Sendable () throws -> [(String, JSONValue)]) async -> SlackAPIResponse {
        switch await onSearchThread(work) {
        case .success(let members): return SlackAPI.success(members)
        case .failure(let error): return SlackAPI.respond { throw error }
        }
    }
}
