import Foundation
import Testing
@testable import SlackIndexTestSupport

/// The layers the README promises, checked on the sources: SwiftPM lets a target import a transitive dependency's
/// module, so the compiler alone does not stop GRDB from leaking back into the library.
@Suite struct LayerTests {
    /// Every Swift file under `Sources/<target>`, with its text.
    static func sources() throws -> [(target: String, path: String, text: String)] {
        let sources = TestSupport.root.appendingPathComponent("Sources")
        let fm = FileManager.default
        var files: [(String, String, String)] = []
        for target in try fm.contentsOfDirectory(atPath: sources.path).sorted() {
            let base = sources.appendingPathComponent(target).path
            guard let walker = fm.enumerator(atPath: base) else {
                Issue.record("cannot list \(base)")
                continue
            }
            for case let relative as String in walker where relative.hasSuffix(".swift") {
                let path = base + "/" + relative
                files.append((target, path, try String(contentsOfFile: path, encoding: .utf8)))
            }
        }
        return files
    }

    @Test func onlyTheStoreImportsGRDBOrSQLite() throws {
        let files = try Self.sources()
        #expect(files.count > 50, "the walk found the sources")
        #expect(files.contains { $0.target == "SlackIndexStore" && $0.text.contains("import GRDB\n") })
        #expect(files.contains { $0.target == "SlackIndexStore" && $0.text.contains("import PostgresNIO\n") })
        for file in files where file.target != "SlackIndexStore" {
            for module in [
                "import GRDB", "import GRDBSQLite", "import SQLite3", "import CSlackTokenizer", "import PostgresNIO",
            ] {
                #expect(!file.text.contains(module + "\n"), "\(file.path) has \(module)")
            }
        }
    }

    @Test func noGRDBTypesOutsideTheStore() throws {
        let grdbTypes = ["Database)", "Database,", "(in db:", "DatabasePool", "DatabaseQueue", "StatementArguments"]
        for file in try Self.sources() where file.target != "SlackIndexStore" {
            for name in grdbTypes {
                #expect(!file.text.contains(name), "\(file.path) mentions \(name)")
            }
        }
    }

    /// Above the store, code holds the archive's roles (`ArchiveStore`, `SearchIndex`, …), never a backend: the
    /// SQLite and PostgreSQL types are named only inside the store, and only `Archive.init` (the one factory) opens
    /// one.
    @Test func backendsAreNamedOnlyByTheFactory() throws {
        let files = try Self.sources()
        let backendTypes = try Self.backendTypes(in: files)
        #expect(backendTypes.contains("SQLiteArchive") && backendTypes.contains("SQLitePreparedSearch"))
        #expect(backendTypes.contains("PostgresArchive") && backendTypes.contains("PostgresPreparedSearch"))
        for file in files where file.target != "SlackIndexStore" {
            for name in backendTypes {
                #expect(!file.text.contains(name), "\(file.path) names the backend type \(name)")
            }
        }
        for opener in ["SQLiteArchive(path:", "PostgresArchive(location:"] {
            let opening = files.filter { $0.text.contains(opener) }.map(\.path)
            #expect(opening.count == 1 && opening[0].hasSuffix("Sources/SlackIndexStore/Archive.swift"), "\(opening)")
        }
    }

    /// The types the store declares with an `SQLite` or `Postgres` prefix (the backends' own).
    static func backendTypes(in files: [(target: String, path: String, text: String)]) throws -> Set<String> {
        let declaration = try Regex(#"(?:class|struct|enum|protocol|actor) ((?:SQLite|Postgres)[A-Za-z]+)"#)
        var names: Set<String> = []
        for file in files where file.target == "SlackIndexStore" {
            for match in file.text.matches(of: declaration) {
                if let name = match.output[1].substring { names.insert(String(name)) }
            }
        }
        return names
    }

    /// Every import and sync writes through one pipeline (issue 49): above the store only `ImportPipeline` opens
    /// the sink's import session and starts a writer thread, and how messages are packed for storage is the
    /// sink's business (`ImportSink.prepareForWrite`), not the importer's.
    @Test func everySourceWritesThroughTheOnePipeline() throws {
        let files = try Self.sources()
        let pipeline = files.filter { $0.path.hasSuffix("Sources/SlackIndex/Import/ImportPipeline.swift") }
        #expect(pipeline.count == 1 && pipeline[0].text.contains(".importSession("))
        for file in files where file.target != "SlackIndexStore" && !file.path.hasSuffix("/ImportPipeline.swift") {
            #expect(!file.text.contains(".importSession("), "\(file.path) opens an import session of its own")
            #expect(!file.text.contains("packRaws("), "\(file.path) packs raw JSON itself")
        }
        for file in files where file.path.contains("Sources/SlackIndex/Import/") || file.path.contains("/Sync/") {
            guard !file.path.hasSuffix("/ImportPipeline.swift") else { continue }
            #expect(!file.text.contains("Thread {"), "\(file.path) starts a thread of its own")
        }
    }

    /// The MCP SDK stays in its module: the library, the store and `serve` never see it.
    @Test func onlyTheMCPModuleImportsTheSDK() throws {
        let files = try Self.sources()
        #expect(files.contains { $0.target == "SlackIndexMCP" && $0.text.contains("import MCP\n") })
        for file in files where file.target != "SlackIndexMCP" {
            #expect(!file.text.contains("import MCP\n"), "\(file.path) imports MCP")
        }
    }
}
