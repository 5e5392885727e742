import Foundation
import Testing
@testable import SlackIndexTestSupport

/// Every ```console example of the README runs as written against `sample-data/` and prints what the README shows
/// (issue 48), as `DocExamplesTests` keeps the DocC article honest. The commands run in order in one empty archive
/// (`$SLACKINDEX_DB`), so an example may build on the one before it. Only what varies from run to run is
/// normalised: the archive's path and the import's time and rate.
@Suite struct ReadmeExamplesTests {
    struct Example {
        var arguments: [String]
        var expected: [String]
    }

    /// The `$ slackindex …` lines of the README's console blocks and the lines printed after each.
    static func examples(in readme: String) -> [Example] {
        var examples: [Example] = []
        var inConsole = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                inConsole = line == "```console"
                continue
            }
            guard inConsole else { continue }
            if line.hasPrefix("$ slackindex ") {
                examples.append(Example(arguments: words(String(line.dropFirst(13))), expected: []))
            } else if !examples.isEmpty {
                examples[examples.count - 1].expected.append(line)
            }
        }
        return examples
    }

    /// The words of a command line as a POSIX shell splits them (single and double quotes; `#` starts a comment).
    static func words(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == "#" && !inWord {
                break
            } else if character == " " {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }

    /// The import summary's first line with its time and rate, and the archive's path, as the README writes them.
    static func normalised(_ output: String, database: String) -> [String] {
        output.replacingOccurrences(of: database, with: "~/.local/share/slackindex/archive.sqlite")
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .map { line in
                guard line.hasPrefix("Imported "), let range = line.range(of: #" in [0-9.]+ s \([0-9,]+ messages/s\)"#, options: .regularExpression)
                else { return line }
                return line.replacingCharacters(in: range, with: " in TIME")
            }
            .filter { !$0.isEmpty }
    }

    @Test func theReadmesConsoleExamplesRunAsWritten() throws {
        let readme = try String(contentsOf: TestSupport.root.appendingPathComponent("README.md"), encoding: .utf8)
        let examples = Self.examples(in: readme)
        #expect(examples.count >= 5, "the README's first screen shows what slackindex does")
        let database = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        for example in examples {
            let arguments = example.arguments.map {
                $0.hasPrefix("sample-data/") ? TestSupport.root.appendingPathComponent($0).path : $0
            }
            let run = try CLITests.run(
                arguments, environment: ["SLACKINDEX_DB": database, "TZ": "UTC", "NO_COLOR": "1"])
            let printed = Self.normalised(run.stdout + run.stderr, database: database)
            let expected = Self.normalised(example.expected.joined(separator: "\n"), database: database)
            #expect(printed == expected, "$ slackindex \(example.arguments.joined(separator: " ")) (exit \(run.status))")
        }
    }
}
