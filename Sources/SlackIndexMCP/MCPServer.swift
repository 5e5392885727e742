import Foundation
import MCP
import SlackIndex

/// `slackindex mcp`: the archive as a Model Context Protocol server on stdin/stdout, through the official Swift SDK
/// (its `Server` and `StdioTransport`; no JSON-RPC written here).
///
/// Tools answer with text sized for a model's context (`ArchiveTools`); a tool's failure is a tool result with
/// `isError` and a sentence saying what to send instead (so the model can correct itself), while an unknown
/// tool, resource or prompt is a JSON-RPC `invalid params` error. Nothing but the protocol is written to stdout.
public enum MCPServer {
    /// What the server tells a client about itself when it connects.
    static let instructions = """
        A read-only, offline archive of Slack history. Start with search (Slack's query syntax); every message \
        is named by a handle such as #general/1714000000.000100, which messages_around and thread take. \
        history reads a conversation between dates; conversations and users find names; archive_facts tells \
        what the archive holds. Answers are compact; ask with format "full" for whole messages, and continue a \
        list with the cursor it ends with.
        """

    /// Serves `tools` until the client closes stdin.
    public static func run(_ tools: ArchiveTools, version: String) async throws {
        let server = Server(
            name: "slackindex", version: version, instructions: instructions,
            capabilities: .init(
                prompts: .init(listChanged: false), resources: .init(subscribe: false, listChanged: false),
                tools: .init(listChanged: false)))
        await register(tools, on: server)
        try await server.start(transport: StdioTransport())
        await server.waitUntilCompleted()
    }

    /// The handlers: tools, resources and prompts, each a thin step from the protocol's types to `ArchiveTools`.
    static func register(_ tools: ArchiveTools, on server: Server) async {
        await server.withMethodHandler(ListTools.self) { _ in .init(tools: ArchiveTools.tools) }
        await server.withMethodHandler(CallTool.self) { params in
            do {
                let answer = try tools.call(params.name, arguments: params.arguments)
                return .init(content: [.text(text: answer, annotations: nil, _meta: nil)], isError: false)
            } catch ToolError.unknownTool(let name, let known) {
                throw MCPError.invalidParams(ToolError.unknownTool(name, known: known).description)
            } catch {
                let message = String(describing: error)
                return .init(content: [.text(text: message, annotations: nil, _meta: nil)], isError: true)
            }
        }
        await server.withMethodHandler(ListResources.self) { params in
            let page = try answered { try tools.resources(cursor: params.cursor) }
            return .init(resources: page.resources, nextCursor: page.next)
        }
        await server.withMethodHandler(ListResourceTemplates.self) { _ in
            .init(templates: ArchiveTools.resourceTemplates)
        }
        await server.withMethodHandler(ReadResource.self) { params in
            let text = try answered { try tools.read(uri: params.uri) }
            return .init(contents: [.text(text, uri: params.uri, mimeType: "text/plain")])
        }
        await server.withMethodHandler(ListPrompts.self) { _ in .init(prompts: ArchiveTools.prompts) }
        await server.withMethodHandler(GetPrompt.self) { params in
            let text = try answered { try tools.prompt(params.name, arguments: params.arguments) }
            return .init(description: ArchiveTools.prompts.first { $0.name == params.name }?.description,
                messages: [.user(.text(text: text))])
        }
    }

    /// `work`'s result; its error as `invalid params` with the error's own sentence (resources and prompts have
    /// no `isError` result).
    private static func answered<T>(_ work: () throws -> T) throws -> T {
        do {
            return try work()
        } catch {
            throw MCPError.invalidParams(String(describing: error))
        }
    }
}
