import Foundation

/// A seeded mutation fuzzer: inputs are corpus files changed by random edits that break parsers (bit flips,
/// boundary integers written over length and offset fields, insertions, deletions, duplicated chunks, splices of two
/// inputs, truncation, deep nesting). Deterministic for a seed, so a failure reproduces; not coverage-guided (the
/// corpus and the edits carry the structure).
///
/// The `slackindex-fuzz` executable runs it for minutes per target; `FuzzTests` for seconds in `swift test`.
package struct FuzzLoop {
    /// What a run did.
    package struct Report: Sendable {
        package var executions = 0
        package var seconds = 0.0
        /// Findings that are not crashes (a crash ends the process), with the input that made each.
        package var findings: [(description: String, input: [UInt8])] = []
    }

    /// Runs one input: a finding that is not a crash, or nil (`FuzzTarget.run`, or a target of a module above
    /// the library, such as `slackindex mcp`'s tool arguments).
    private let target: ([UInt8]) -> String?
    private let corpus: [[UInt8]]
    private var random: SeededGenerator

    /// - Parameter corpus: seed inputs (an empty corpus starts from one empty input).
    package init(target: FuzzTarget, corpus: [[UInt8]], seed: UInt64) {
        self.init(corpus: corpus, seed: seed, run: target.run)
    }

    /// A loop over any target: `run` gets each input.
    package init(corpus: [[UInt8]], seed: UInt64, run: @escaping ([UInt8]) -> String?) {
        target = run
        self.corpus = corpus.isEmpty ? [[]] : corpus
        random = SeededGenerator(seed: seed)
    }

    /// Runs every corpus input once, then mutated inputs until `seconds` pass; `willRun` sees each input first
    /// (the driver keeps it, to save it if the process dies).
    package mutating func run(seconds: Double, willRun: ([UInt8]) -> Void = { _ in }) -> Report {
        let start = ContinuousClock.now
        return run(while: { _ in start.duration(to: .now).seconds < seconds }, willRun: willRun)
    }

    /// Runs every corpus input once, then `executions` mutated inputs: the same inputs every time for a seed,
    /// however fast the machine (`FuzzTests`).
    package mutating func run(executions: Int) -> Report {
        let total = corpus.count + executions
        return run(while: { $0.executions < total })
    }

    /// The corpus, then mutated inputs in groups of 16 while `more` says so.
    private mutating func run(while more: (Report) -> Bool, willRun: ([UInt8]) -> Void = { _ in }) -> Report {
        var report = Report()
        let start = ContinuousClock.now
        for input in corpus {
            willRun(input)
            if let finding = target(input) { report.findings.append((finding, input)) }
            report.executions += 1
        }
        while more(report) {
            for _ in 0..<16 {
                let input = mutated()
                willRun(input)
                if let finding = target(input), report.findings.count < 100 {
                    report.findings.append((finding, input))
                }
                report.executions += 1
            }
        }
        report.seconds = start.duration(to: .now).seconds
        return report
    }

    /// A corpus input with 1–8 random edits.
    mutating func mutated() -> [UInt8] {
        var bytes = corpus[random.below(corpus.count)]
        for _ in 0..<(1 + random.below(8)) { edit(&bytes) }
        if bytes.count > 1 << 20 { bytes.removeLast(bytes.count - (1 << 20)) }
        return bytes
    }

    /// Boundary values written over length, count and offset fields.
    private static let interesting: [UInt64] = [
        0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFFE, 0x1_0000_0000,
        UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64.max, UInt64.max - 20,
    ]

    /// Text that JSON and query parsers treat specially (and `the`, which the index pairs in phrases).
    private static let tokens: [[UInt8]] = [
        "\"", "\\", "\\u", "\\ud800", "\\udc00", "\\u0000", "{", "}", "[", "]", ",", ":", "null", "true", "-0",
        "1e999", "9223372036854775808", "\u{1B}", "\u{0}", "\u{FEFF}", "*", "-", "\"\"", "in:", "from:", "has:",
        "before:", "after:", "on:", "during:", ":", "@", "#", "OR", "NOT", "NEAR", "^", "(", ")", "é", "日本",
        " the ", "\"the ", "\"message\":{", "\"ts\":\"", "\"text\":\"", "PK\u{3}\u{4}", "PK\u{1}\u{2}", "PK\u{5}\u{6}",
        "PK\u{6}\u{6}", "PK\u{6}\u{7}",
    ].map { Array($0.utf8) } + [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80]]

    /// Over 40 lines: one switch over the kinds of edit, each a few lines.
    private mutating func edit(_ bytes: inout [UInt8]) {
        let position = bytes.isEmpty ? 0 : random.below(bytes.count + 1)
        switch random.below(11) {
        case 0 where !bytes.isEmpty:  // flip a bit
            let at = random.below(bytes.count)
            bytes[at] ^= UInt8(1) << UInt8(random.below(8))
        case 1 where !bytes.isEmpty:  // a random byte
            bytes[random.below(bytes.count)] = UInt8(truncatingIfNeeded: random.next())
        case 2:  // a boundary integer, little-endian, 2, 4 or 8 bytes, over what is there
            let value = FuzzLoop.interesting[random.below(FuzzLoop.interesting.count)]
            let width = [2, 4, 8][random.below(3)]
            for k in 0..<width {
                let byte = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k)))
                if position + k < bytes.count { bytes[position + k] = byte } else { bytes.append(byte) }
            }
        case 3:  // a special token
            bytes.insert(contentsOf: FuzzLoop.tokens[random.below(FuzzLoop.tokens.count)], at: position)
        case 4 where !bytes.isEmpty:  // delete a range
            let count = min(bytes.count - min(position, bytes.count), 1 + random.below(64))
            if count > 0, position < bytes.count { bytes.removeSubrange(position..<(position + count)) }
        case 5 where !bytes.isEmpty:  // duplicate a chunk
            let from = random.below(bytes.count)
            let chunk = Array(bytes[from..<min(bytes.count, from + 1 + random.below(256))])
            bytes.insert(contentsOf: chunk, at: position)
        case 6:  // splice another input in
            let other = corpus[random.below(corpus.count)]
            guard !other.isEmpty else { return }
            let from = random.below(other.count)
            bytes.insert(contentsOf: other[from..<min(other.count, from + 1 + random.below(512))], at: position)
        case 7 where !bytes.isEmpty:  // truncate
            bytes.removeLast(bytes.count - random.below(bytes.count))
        case 8:  // deep nesting
            let depth = 1 + random.below(random.below(10) == 0 ? 200_000 : 64)
            let open: UInt8 = random.below(2) == 0 ? UInt8(ascii: "[") : UInt8(ascii: "{")
            bytes.insert(contentsOf: [UInt8](repeating: open, count: depth), at: position)
        case 9:  // a run of one byte (long strings, many fields)
            let byte = FuzzLoop.tokens[random.below(FuzzLoop.tokens.count)].first ?? 0
            bytes.insert(contentsOf: [UInt8](repeating: byte, count: 1 + random.below(4_096)), at: position)
        default:  // swap two bytes
            guard bytes.count > 1 else { return }
            bytes.swapAt(random.below(bytes.count), random.below(bytes.count))
        }
    }
}

extension SeededGenerator {
    /// A value in 0..<bound (bound ≥ 1).
    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(max(1, bound)))
    }
}
