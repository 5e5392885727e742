import Foundation
import SlackIndexStore

/// The searchable text of a stored file: text-like files (plain text and source code, CSV, Markdown, JSON; not HTML
/// or SVG), and PDFs when `pdftotext` is installed (`PDFText`); their first 256 KiB, as the messages' own text is
/// cut.
enum FileText {
    /// The most of a file's text that is indexed and snippeted.
    static let maximumBytes = 256 << 10

    /// True for the content types whose words are indexed with their message.
    static func isIndexable(_ contentType: String) -> Bool {
        let base = contentType.lowercased().split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        if base == "application/pdf" { return PDFText.isAvailable }
        return ["text/plain", "text/csv", "text/markdown", "application/json"].contains(base)
    }

    /// The text of `blob` in `store`, or nil when it is not text-like or cannot be read.
    ///
    /// - Complexity: O(min(size, 256 KiB)).
    static func read(_ blob: FileBlob, in store: FileBlobs) -> String? {
        guard isIndexable(blob.contentType), let path = store.path(of: blob.sha256) else { return nil }
        if blob.contentType.lowercased().hasPrefix("application/pdf") {
            return PDFText.extract(path: path, maxBytes: maximumBytes)
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: maximumBytes) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
