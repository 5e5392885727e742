import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// "Did you mean" for words (spelling candidates from the archive's vocabulary) and names (unique prefixes, closest
/// names).
@Suite struct DidYouMeanTests {
    static let users = #"""
        [{"id": "U1", "name": "ann", "real_name": "Ann Lee", "team_id": "T1"},
         {"id": "U2", "name": "anna.k", "real_name": "Anna Kowalska", "team_id": "T1"},
         {"id": "U3", "name": "bmartin", "real_name": "Bób Martín", "team_id": "T1",
          "profile": {"display_name": "bobby", "real_name": "Bób Martín"}}]
        """#
    static let channels = #"""
        [{"id": "C1", "name": "general", "created": 1433558319, "members": ["U1"]},
         {"id": "C2", "name": "équipe-paris", "created": 1433558319, "members": ["U1"]},
         {"id": "C3", "name": "engineering", "created": 1433558319, "members": ["U1"]},
         {"id": "C4", "name": "eng-ops", "created": 1433558319, "members": ["U1"]}]
        """#
    static let day = #"""
        [{"type":"message","user":"U1","text":"deploy the release today","ts":"1700000000.000100"},
         {"type":"message","user":"U2","text":"deploy again tomorrow","ts":"1700000000.000200"},
         {"type":"message","user":"U3","text":"deploy and receive the budget","ts":"1700000000.000300"},
         {"type":"message","user":"U3","text":"the budget is ready","ts":"1700000000.000400"}]
        """#

    /// Suggestions on (the library's default is off; `search` turns them on).
    static var options: SearchOptions {
        var options = SearchOptions()
        options.suggest = true
        return options
    }

    static func engine() throws -> SearchEngine {
        let archive = try TestSupport.makeArchive()
        let export = try TestSupport.minimalExport(
            days: ["2023-11-14": day],
            extra: ["users.json": users, "channels.json": channels, "équipe-paris/2023-11-14.json": day])
        _ = try Importer(archive: archive).importExport(at: export.path)
        return SearchEngine(archive: archive)
    }

    // MARK: - Words

    @Test func editsAreOneTypoAway() {
        let edits = Set(SpellingCandidates.edits(of: "deplyo").map(\.candidate))
        #expect(edits.contains("deploy"))  // transposition
        #expect(edits.contains("deplo"))  // deletion
        #expect(edits.contains("deplyos"))  // insertion
        #expect(edits.contains("replyo"))  // substitution
        #expect(!edits.contains("deplyo"))
        #expect(SpellingCandidates.edits(of: "ab").isEmpty)
        #expect(SpellingCandidates.edits(of: "a1b2").isEmpty)
        #expect(SpellingCandidates.edits(of: String(repeating: "x", count: 33)).isEmpty)
    }

    @Test(arguments: [("s", "d", true), ("a", "q", true), ("w", "a", true), ("z", "s", true), ("q", "p", false),
                      ("a", "c", false), ("é", "e", false)])
    func keyboardNeighbours(a: Character, b: Character, adjacent: Bool) {
        #expect(SpellingCandidates.keyboardAdjacent(a, b) == adjacent)
        #expect(SpellingCandidates.keyboardAdjacent(b, a) == adjacent)
    }

    @Test(arguments: [("deplyo", "deploy"), ("dpeloy", "deploy"), ("deploi", "deploy"), ("budgte", "budget"),
                      ("recieve", "receive"), ("bduget", "budget"), ("tomorow", "tomorrow")])
    func suggestsTheIntendedWord(typo: String, intended: String) throws {
        let results = try Self.engine().search(typo, options: Self.options)
        #expect(results.hits.isEmpty)
        #expect(results.suggestions.first?.replacement == intended)
        #expect(results.suggestions.allSatisfy { $0.word == typo })
    }

    @Test func aVariantThatMatchesIsNotCorrected() throws {
        var options = Self.options
        options.wordVariants = true
        let results = try Self.engine().search("Budgets in:#general", options: options)
        #expect(results.hits.count == 2)
        #expect(results.suggestions.isEmpty)
    }

    @Test func aWordThatMatchesHasNoSuggestion() throws {
        let engine = try Self.engine()
        #expect(try engine.search("deploy", options: Self.options).suggestions.isEmpty)
        #expect(try engine.search("zzqqxx", options: Self.options).suggestions.isEmpty)
        #expect(try engine.search("\"deplyo\"", options: Self.options).suggestions.isEmpty)  // quoted: as typed
        #expect(try engine.search("deplyo").suggestions.isEmpty)  // off by default
    }

    @Test func theCorrectedQueryKeepsFilters() throws {
        let engine = try Self.engine()
        let query = engine.parse("deplyo in:#general -budget", options: Self.options)
        let results = try engine.search(query, text: "deplyo in:#general -budget", options: Self.options)
        let corrected = engine.corrected(query, with: results.suggestions)
        #expect(corrected.slackSyntax == "deploy -budget in:#general")
        #expect(try engine.search(corrected, text: corrected.slackSyntax, options: SearchOptions()).hits.count == 2)
    }

    // MARK: - Names

    static func users(_ engine: SearchEngine, _ query: String) throws -> Set<String> {
        Set(try engine.search(query).hits.compactMap(\.message.userID))
    }

    @Test func uniquePrefixesOfNames() throws {
        let engine = try Self.engine()
        #expect(try Self.users(engine, "deploy from:bob") == ["U3"])  // display name
        #expect(try Self.users(engine, "deploy from:BÓB") == ["U3"])  // real name, case and accents folded
        #expect(try Self.users(engine, "deploy from:@anna") == ["U2"])  // handle
        #expect(try Self.users(engine, "deploy from:anna.") == ["U2"])
        #expect(try engine.search("deploy in:#équ").hits.count == 3)
        #expect(try engine.search("deploy in:equipe").hits.count == 3)
        #expect(try engine.search("deploy in:engin").hits.isEmpty)  // resolves (engineering has no messages)
    }

    @Test func ambiguousPrefixesListTheCandidates() throws {
        let engine = try Self.engine()
        #expect(throws: SearchError.self) { try engine.search("deploy from:an") }
        do {
            _ = try engine.search("deploy in:eng")
            Issue.record("in:eng should be ambiguous")
        } catch let error as SearchError {
            #expect(error.description.contains("#engineering") && error.description.contains("#eng-ops"))
        }
    }

    @Test func unknownNamesSuggestTheClosest() throws {
        let engine = try Self.engine()
        do {
            _ = try engine.search("deploy in:#genral")
            Issue.record("in:#genral should not resolve")
        } catch let error as SearchError {
            #expect(error.description.contains("did you mean #general"))
        }
        do {
            _ = try engine.search("deploy from:bbmartin")
            Issue.record("from:bbmartin should not resolve")
        } catch let error as SearchError {
            #expect(error.description.contains("@bmartin"))
        }
    }

    @Test func historyTakesAUniquePrefix() throws {
        let archive = try Self.engine().archive
        #expect(try archive.conversation(named: "gen", allowingPrefix: true).id == "C1")
        #expect(try archive.conversation(named: "#équipe", allowingPrefix: true).id == "C2")
        #expect(throws: StoreError.self) { try archive.conversation(named: "gen") }
        #expect(throws: StoreError.self) { try archive.conversation(named: "eng", allowingPrefix: true) }
        #expect(throws: StoreError.self) { try archive.conversation(named: "genral", allowingPrefix: true) }
    }
}
