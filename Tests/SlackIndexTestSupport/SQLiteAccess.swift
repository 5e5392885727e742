import GRDB
@testable import SlackIndexStore

// The SQLite backend under the handle, for tests that read or damage its tables directly (and only for them: code
// above the store reaches the archive through its roles).
extension Archive {
    /// The SQLite implementation of the roles.
    var sqlite: SQLiteArchive {
        guard let archive = store as? SQLiteArchive else { fatalError("this test reads SQLite's tables") }
        return archive
    }

    /// SQLite's connection pool.
    var pool: DatabasePool { sqlite.pool }
}
