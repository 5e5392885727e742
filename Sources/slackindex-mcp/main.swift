import Foundation
import SlackIndex
import SlackIndexMCP

// `slackindex-mcp --db LOCATION (--user USER_ID | token in $SLACKINDEX_MCP_TOKEN) [--version-string V]`: the MCP
// server that `slackindex mcp` starts once it has checked the archive and the viewer (Package.swift says why this is
// an executable of its own). The token comes through the environment so that `ps` does not show it.

let arguments = CommandLine.arguments

func value(_ flag: String) -> String? {
    guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data(("Error: " + message + "\n").utf8))
    exit(status)
}

guard let location = value("--db") else {
    fail("slackindex-mcp is started by `slackindex mcp`; run that instead (see `slackindex mcp --help`).", status: 64)
}
let viewer: MCPViewer
if let user = value("--user") {
    viewer = .user(user)
} else if let token = ProcessInfo.processInfo.environment["SLACKINDEX_MCP_TOKEN"], !token.isEmpty {
    viewer = .token(token)
} else {
    fail("slackindex-mcp needs --user or a token: run `slackindex mcp --as USER` or `--token TOKEN`.", status: 64)
}
do {
    let archive = try Archive(path: location, access: .readOnly)
    try await MCPServer.run(ArchiveTools(archive: archive, viewer: viewer), version: value("--version-string") ?? "")
} catch {
    fail("\(error)", status: 1)
}
