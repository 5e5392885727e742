import Foundation

@_spi(Benchmarks) @testable import SlackIndex

/// A remote that answers what it is told, after a delay, or fails.
struct FakeRemoteSearch: RemoteSearch {
    enum Behaviour: Sendable {
        case answer(RemotePage, after: Duration)
        case fail(RemoteError, after: Duration)
        case hang
    }
    var behaviour: Behaviour

    func search(_ query: SearchQuery, limit: Int, sort: SearchSort) async throws -> RemotePage {
        switch behaviour {
        case .answer(let page, let delay):
            try await Task.sleep(for: delay)
            return RemotePage(hits: Array(page.hits.prefix(limit)), total: page.total)
        case .fail(let error, let delay):
            try await Task.sleep(for: delay)
            throw error
        case .hang:
            try await Task.sleep(for: .seconds(3600))
            return RemotePage(hits: [], total: 0)
        }
    }
}
