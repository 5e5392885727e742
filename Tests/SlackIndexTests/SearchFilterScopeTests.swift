import Foundation
import GRDB
import Testing

@testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// A filter that resolves to no conversation matches nothing, and says why (issue 47's D2: `in:@paul.wilson`
/// without a DM dropped the filter and counted the whole archive).
@Suite struct SearchFilterScopeTests {
    @Test func inAPersonWithoutADMMatchesNothing() throws {
        let archive = try TestSupport.sampleArchive()
        // A user of sample-data with whom no DM exists (none of the DMs' members).
        let handle = try #require(
            try archive.pool.read { db in
                try String.fetchOne(
                    db,
                    sql: """
                        SELECT u.handle FROM user u
                        WHERE u.is_placeholder = 0 AND NOT EXISTS (
                            SELECT 1 FROM conversation c WHERE c.kind = 'dm' AND c.members LIKE '%' || u.id || '%')
                        ORDER BY u.handle LIMIT 1
                        """)
            })
        let engine = SearchEngine(archive: archive)
        #expect(try archive.store.directMessages(with: try engine.userID(named: handle), me: nil).isEmpty)
        let (count, notes) = try engine.count(engine.parse("in:@\(handle)", options: SearchOptions()), text: "in:@\(handle)", options: SearchOptions())
        #expect(count == 0)
        #expect(notes.contains { $0.contains("No direct message with \(handle)") }, "\(notes)")
        let results = try engine.search("deploy in:@\(handle)")
        #expect(results.hits.isEmpty)
        #expect(results.notes.contains { $0.contains("No direct message with \(handle)") }, "\(results.notes)")
        // Excluding it still excludes nothing else.
        #expect(try engine.count("-in:@\(handle)").0 == 3_000)
    }
}
