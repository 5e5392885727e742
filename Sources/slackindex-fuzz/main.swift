import Foundation
import SlackIndex
import SlackIndexMCP

#if canImport(Glibc)
    import Glibc
#endif

// slackindex-fuzz TARGET SECONDS [SEED]: the seeded mutation fuzzer (`FuzzLoop`) over one target, with the corpus
// in Fuzz/corpus/TARGET and Fuzz/regressions/TARGET. Prints one JSON line of what it did. When an input crashes
// the process (a trap), a signal handler writes that input to Fuzz/findings/TARGET-crash-SEED before dying; other
// findings are written next to it. See Fuzz/README.md.

let arguments = CommandLine.arguments
let name = arguments.count > 1 ? arguments[1] : ""
// The library's targets, and `slackindex mcp`'s tool arguments (a module above the library).
let run = name == MCPFuzzTarget.name ? MCPFuzzTarget.run : FuzzTarget(rawValue: name).map { $0.run }
guard arguments.count >= 3, let run, let seconds = Double(arguments[2]), seconds >= 0 else {
    let names = (FuzzTarget.allCases.map(\.rawValue) + [MCPFuzzTarget.name]).joined(separator: "|")
    FileHandle.standardError.write(Data("usage: slackindex-fuzz \(names) SECONDS [SEED]\n".utf8))
    exit(64)
}
let seed = arguments.count > 3 ? UInt64(arguments[3]) ?? 1 : 1
let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Fuzz")
var corpus: [[UInt8]] = []
for folder in ["corpus", "regressions"] {
    let directory = root.appendingPathComponent(folder).appendingPathComponent(name)
    // A missing folder is an empty corpus (regressions/TARGET appears with the first crash); one that exists
    // but cannot be listed stops the run rather than fuzzing without its seeds.
    guard FileManager.default.fileExists(atPath: directory.path) else { continue }
    let names: [String]
    do { names = try FileManager.default.contentsOfDirectory(atPath: directory.path) } catch {
        FileHandle.standardError.write(Data("cannot list \(directory.path): \(error.localizedDescription)\n".utf8))
        exit(66)
    }
    for name in names.sorted() where !name.hasPrefix(".") {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
            FileHandle.standardError.write(Data("cannot read \(name) in \(directory.path)\n".utf8))
            exit(66)
        }
        corpus.append([UInt8](data))
    }
}
let findings = root.appendingPathComponent("findings")
try FileManager.default.createDirectory(at: findings, withIntermediateDirectories: true)

/// The input being run, kept where a signal handler can write it out (only async-signal-safe calls there).
enum CrashInput {
    nonisolated(unsafe) static var path: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) static var buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: (1 << 20) + 1)
    nonisolated(unsafe) static var count = 0
}
CrashInput.path = strdup(findings.appendingPathComponent("\(name)-crash-\(seed)").path)
let onCrash: @convention(c) (Int32) -> Void = { signal in
    if let path = CrashInput.path, case let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644),
        descriptor >= 0
    {
        _ = write(descriptor, CrashInput.buffer.baseAddress, CrashInput.count)
        close(descriptor)
    }
    _ = Glibc.signal(signal, SIG_DFL)
    raise(signal)
}
for signal in [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE] { _ = Glibc.signal(signal, onCrash) }

var loop = FuzzLoop(corpus: corpus, seed: seed, run: run)
let report = loop.run(seconds: seconds) { input in
    CrashInput.count = min(input.count, CrashInput.buffer.count)
    for index in 0..<CrashInput.count { CrashInput.buffer[index] = input[index] }
}
for (index, finding) in report.findings.enumerated() {
    let url = findings.appendingPathComponent("\(name)-finding-\(seed)-\(index)")
    try Data(finding.input).write(to: url)
    FileHandle.standardError.write(Data("finding: \(finding.description) (input: \(url.path))\n".utf8))
}
let rate = report.seconds > 0 ? Double(report.executions) / report.seconds : 0
print(
    #"{"target":"\#(name)","seed":\#(seed),"seconds":\#(Int(report.seconds)),"#
        + #""executions":\#(report.executions),"per_second":\#(Int(rate)),"corpus":\#(corpus.count),"#
        + #""findings":\#(report.findings.count),"crashes":0}"#)
exit(report.findings.isEmpty ? 0 : 1)
