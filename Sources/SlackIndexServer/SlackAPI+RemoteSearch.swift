import Foundation
import NIOPosix
import SlackIndex

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
    /// says who may read it). `total` is the archive's count plus the remote-only hits on the page.
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
        let (outcome, local) = await SearchEngine.askRemote(
            remote, query, limit: page.count, sort: page.options.sort, until: until
        ) {
            await onSearchThread { try self.localHits(page) }
        }
        return await answered {
            let found = try local.get()
            let remoteAnswer = try self.remoteAnswer(outcome, for: page)
            let merged = ResultMerger.merge(
                local: found.hits, remote: remoteAnswer.hits, sort: page.options.sort, limit: page.count)
            let remoteOnly = merged.filter { $0.source == .remote }.count
            return try self.searchAnswer(page, hits: (merged, found.total + remoteOnly), remote: remoteAnswer)
        }
    }

    /// The remote's outcome as hits the token may see, or the problem.
    private func remoteAnswer(_ outcome: SearchEngine.RemoteOutcome, for page: SearchPage) throws -> RemoteAnswer {
        switch outcome {
        case .answered(let remotePage):
            let hits = try engine.hits(of: remotePage, saveRemote: false).hits.filter { hit in
                try archive.visibleConversation(id: hit.message.conversationID, to: page.token) != nil
            }
            return RemoteAnswer(hits: hits)
        case .failed(let error):
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
