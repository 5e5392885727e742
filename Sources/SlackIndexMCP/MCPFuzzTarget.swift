import Foundation
import MCP
import SlackIndex

/// The `mcp-tools` fuzzing target: what a client sends to `slackindex mcp` (tool arguments, resource URIs,
/// prompt arguments) run against a small archive that holds a DM and a private channel its viewer is not in.
///
/// An input that is a JSON object `{"name": TOOL, "arguments": {…}}` is one call; any other input is sent as
/// every text argument of every tool, as a resource URI and as prompt arguments. A finding is an error other
/// than `ToolError` (a tool that failed where it should have explained), or an answer that shows the hidden
/// conversations' text (`secret`). A trap kills the process, as for the library's targets.
package enum MCPFuzzTarget {
    /// The name `slackindex-fuzz` and `Fuzz/run` know it by (its corpus is `Fuzz/corpus/mcp-tools`).
    package static let name = "mcp-tools"
    /// A word only the hidden DM and private channel hold (searched for as `zebrafinch`, shown in any answer
    /// that leaks them).
    static let secret = "nests"
    /// The hidden private channel's name: no answer or error may name it unless the input did.
    static let hiddenName = "hidden-heron"

    /// Runs one input; returns a description of a finding that is not a crash, or nil.
    package static func run(_ input: [UInt8]) -> String? {
        guard let tools else { return "the fuzz archive could not be made" }
        let data = Data(input.prefix(8_192))
        let text = String(decoding: data, as: UTF8.self)
        if let call = try? JSONDecoder().decode([String: Value].self, from: data), let name = call["name"]?.stringValue {
            return check(name, input: text) { try tools.call(name, arguments: call["arguments"]?.objectValue) }
        }
        for (what, work) in calls(sending: text, to: tools) {
            if let finding = check("\(what) with \(String(reflecting: text))", input: text, work) { return finding }
        }
        return nil
    }

    /// `text` as every text argument of every tool (all at once, then each alone: one bad argument would stop a
    /// call before the others are read), as resource URIs, and as every prompt's arguments.
    private static func calls(sending text: String, to tools: ArchiveTools) -> [(String, () throws -> String)] {
        var calls: [(String, () throws -> String)] = []
        for tool in ToolName.allCases {
            let names = tool.arguments.filter { !["limit", "exact"].contains($0) }
            var all = Dictionary(uniqueKeysWithValues: names.map { ($0, Value.string(text)) })
            if all["format"] != nil { all["format"] = "full" }
            calls.append((tool.rawValue, { try tools.call(tool.rawValue, arguments: all) }))
            for name in names {
                let one: [String: Value] = [name: .string(text)]
                calls.append(("\(tool.rawValue) \(name)", { try tools.call(tool.rawValue, arguments: one) }))
            }
        }
        for uri in [text, "slackindex://conversation/\(text)", "slackindex://thread/\(text)"] {
            calls.append(("resource \(uri)", { try tools.read(uri: uri) }))
        }
        for prompt in ArchiveTools.prompts {
            let arguments = Dictionary(uniqueKeysWithValues: (prompt.arguments ?? []).map { ($0.name, text) })
            calls.append(("prompt \(prompt.name)", { try tools.prompt(prompt.name, arguments: arguments) }))
        }
        return calls
    }

    /// A finding when `work` fails with anything but a `ToolError`, or answers (or explains) with a hidden
    /// conversation's text or name that `input` did not hold.
    private static func check(_ what: String, input: String, _ work: () throws -> String) -> String? {
        let typed = input.lowercased()
        let named = typed.contains(hiddenName.prefix(6))
        do {
            let answer = try work().lowercased()
            if (!typed.contains(secret) && answer.contains(secret)) || (!named && answer.contains(hiddenName)) {
                return "\(what) showed a hidden conversation: \(answer)"
            }
            return nil
        } catch let error as ToolError {
            let leaked = !named && error.description.contains(hiddenName)
            return leaked ? "\(what) named a hidden conversation: \(error)" : nil
        } catch {
            return "\(what) failed with \(error)"
        }
    }

    /// The archive: #general (public), #hidden-heron (private, without the viewer), a DM between two others; the viewer is
    /// U1 (ann). Made once per process.
    private static let tools: ArchiveTools? = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "slackindex-mcp-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
        ExitCleanup.remove(folder)
        let export = folder.appendingPathComponent("export")
        let files: [String: String] = [
            "users.json": #"[{"id": "U1", "name": "ann"}, {"id": "U2", "name": "bob"}, {"id": "U3", "name": "cat"}]"#,
            "channels.json": #"[{"id": "C1", "name": "general", "members": ["U1", "U2", "U3"]}]"#,
            "groups.json": #"[{"id": "G1", "name": "hidden-heron", "members": ["U2", "U3"]}]"#,
            "dms.json": #"[{"id": "D1", "members": ["U2", "U3"]}]"#,
            "general/2024-01-02.json": #"""
                [{"ts": "1704200000.000100", "user": "U1", "text": "deploy the release", "reply_count": 1,
                  "thread_ts": "1704200000.000100"},
                 {"ts": "1704200100.000100", "user": "U2", "text": "done", "thread_ts": "1704200000.000100"},
                 {"ts": "1704200200.000100", "user": "U3", "text": "日本語 and café <@U1>"}]
                """#,
            "hidden-heron/2024-01-02.json": #"[{"ts": "1704200300.000100", "user": "U2", "text": "zebrafinch nests in private"}]"#,
            "D1/2024-01-02.json": #"[{"ts": "1704200400.000100", "user": "U3", "text": "zebrafinch nests in a DM"}]"#,
        ]
        do {
            for (path, text) in files {
                let url = export.appendingPathComponent(path)
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(text.utf8).write(to: url)
            }
            let archive = try Archive(path: folder.appendingPathComponent("archive.sqlite").path)
            _ = try Importer(archive: archive).importExport(at: export.path)
            let fixed = Date(timeIntervalSince1970: 1_704_300_000)
            return ArchiveTools(archive: archive, viewer: .user("U1"), now: { fixed })
        } catch {
            return nil
        }
    }()
}
