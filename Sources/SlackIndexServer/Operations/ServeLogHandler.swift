import Foundation
import Logging
import SlackIndex

/// `serve`'s log lines through swift-log: one line per event, as key=value pairs (logfmt) or as one JSON object,
/// handed to `write` (stderr in `serve`; a buffer in tests).
///
/// A line holds `ts`, `level`, `msg` and the metadata, keys sorted; Hummingbird's `hb.request.id` is written as
/// `request_id`. What goes into the metadata is the callers' business: `RequestObserver` puts there the route's
/// name, the status and the duration, never the path, the query string, a header or a body (docs/serve.md).
public struct ServeLogHandler: LogHandler {
    /// How a line is written.
    public enum Format: String, Sendable, CaseIterable {
        /// `ts=2026-12-05T10:00:00.123Z level=info msg=request method=search.messages status=200`
        case logfmt
        /// `{"ts":"…","level":"info","msg":"request","method":"search.messages","status":"200"}`
        case json
    }

    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    let format: Format
    let write: @Sendable (String) -> Void

    public init(level: Logger.Level, format: Format, write: @escaping @Sendable (String) -> Void) {
        logLevel = level
        self.format = format
        self.write = write
    }

    /// A logger labelled `slackindex` writing through a handler like this one.
    public static func logger(
        level: Logger.Level, format: Format, write: @escaping @Sendable (String) -> Void
    ) -> Logger {
        Logger(label: "slackindex") { _ in ServeLogHandler(level: level, format: format, write: write) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, new in new } }
        if let own = event.metadata { fields.merge(own) { _, new in new } }
        var pairs: [(String, String)] = [
            ("ts", Date.now.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))),
            ("level", event.level.rawValue), ("msg", event.message.description),
        ]
        let named = fields.map { key, value in (key == "hb.request.id" ? "request_id" : key, "\(value)") }
        pairs += named.sorted { $0.0 < $1.0 }
        write(Self.line(pairs, format: format))
    }

    /// One line of `pairs` in `format`.
    static func line(_ pairs: [(String, String)], format: Format) -> String {
        switch format {
        case .json: return JSONValue.object(pairs.map { ($0.0, .string($0.1)) }).serialized
        case .logfmt: return pairs.map { "\($0.0)=\(logfmtValue($0.1))" }.joined(separator: " ")
        }
    }

    /// A logfmt value: bare when it has no space, `=`, quote or control character; else quoted as a JSON string
    /// is (`JSONText.appendQuoted`: `"`, `\` and line breaks escaped), so one event is always one line.
    static func logfmtValue(_ value: String) -> String {
        let plain =
            !value.isEmpty && !value.unicodeScalars.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0.value < 0x20 }
        guard !plain else { return value }
        var out = ""
        JSONText.appendQuoted(value, to: &out)
        return out
    }
}
