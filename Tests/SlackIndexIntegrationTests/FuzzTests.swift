import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexTestSupport

/// The fuzzing targets in `swift test`: every seed and every saved regression input runs once (a trap would kill
/// the test process), then a short seeded mutation run per target (`Fuzz/run` runs the long ones).
@Suite struct FuzzTests {
    static let fuzz = TestSupport.root.appendingPathComponent("Fuzz")

    static func inputs(_ folder: String, _ target: FuzzTarget) throws -> [[UInt8]] {
        let directory = fuzz.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            .filter { !$0.hasPrefix(".") }
            .map { [UInt8](try Data(contentsOf: directory.appendingPathComponent($0))) }
    }

    @Test(arguments: FuzzTarget.allCases)
    func seedsAndRegressionsRunClean(_ target: FuzzTarget) throws {
        let seeds = try Self.inputs("corpus", target)
        #expect(seeds.count >= 4, "the seed corpus of \(target.rawValue)")
        for input in try seeds + Self.inputs("regressions", target) {
            #expect(target.run(input) == nil)
        }
    }

    /// A fixed number of mutated inputs per target, about 2 s each in the debug build (the CI's short seeded
    /// run: the same inputs on any machine; `slackindex-fuzz` runs for minutes). Measured 2026-11-28: 8 s per
    /// target was 32 s of the suite's CPU for the same kind of coverage. Seeds differ per target.
    @Test(arguments: FuzzTarget.allCases)
    func shortSeededRunFindsNothing(_ target: FuzzTarget) throws {
        let seed = UInt64(FuzzTarget.allCases.firstIndex(of: target) ?? 0) + 20_261_124
        var loop = FuzzLoop(target: target, corpus: try Self.inputs("corpus", target), seed: seed)
        let executions = [FuzzTarget.zip: 1_500, .json: 1_500, .syncPage: 1_000, .query: 200][target] ?? 500
        let report = loop.run(executions: executions)
        #expect(report.executions >= executions, "\(report.executions) executions")
        #expect(report.findings.isEmpty, "\(report.findings.map(\.description))")
    }

    /// The mutator reproduces from its seed and reaches the edits that matter (a boundary integer, nesting).
    @Test func mutationsAreSeededAndVaried() {
        let corpus: [[UInt8]] = [Array(#"{"ts": "1.5", "text": "hello"}"#.utf8)]
        var first = FuzzLoop(target: .json, corpus: corpus, seed: 9)
        var second = FuzzLoop(target: .json, corpus: corpus, seed: 9)
        let a = (0..<200).map { _ in first.mutated() }
        #expect(a == (0..<200).map { _ in second.mutated() })
        #expect(Set(a).count > 150)
        #expect(a.contains { $0.count > corpus[0].count + 32 })
        #expect(a.contains { $0.count < corpus[0].count })
    }
}
