import Foundation

/// A stored file's type, decided from its first bytes as well as its name: a name or a Slack `mimetype` never makes
/// bytes that are not an image an image, and HTML or SVG is recognised whatever the file is called.
public enum FileType {
    /// The content type of bytes beginning with `prefix` (up to 4 KiB is enough), for a file Slack called `name`
    /// with `mimetype`.
    ///
    /// Known binary formats by their magic numbers; text (valid UTF-8, no NUL) as HTML or SVG when it looks like
    /// either, else as the text type the name or mimetype says (`text/plain` when they say none or a binary one);
    /// anything else `application/octet-stream`, or the name's office format for a zip (docx, xlsx, pptx).
    /// - Complexity: O(prefix).
    public static func decide(prefix: [UInt8], name: String?, mimetype: String?) -> String {
        let ext = name.map { ($0 as NSString).pathExtension.lowercased() } ?? ""
        if let magic = magic(prefix) {
            if magic == "application/zip", let office = officeTypes[ext] { return office }
            return magic
        }
        guard isText(prefix) else { return "application/octet-stream" }
        let head = String(decoding: prefix.prefix(1024), as: UTF8.self).lowercased()
        let trimmed = head.drop { $0.isWhitespace || $0 == "\u{feff}" }
        for marker in ["<!doctype html", "<html", "<head", "<body", "<script", "<iframe"] where trimmed.hasPrefix(marker) {
            return "text/html; charset=utf-8"
        }
        if head.contains("<svg") { return "image/svg+xml" }
        if trimmed.hasPrefix("<?xml") { return "application/xml" }
        let claimed = (mimetype ?? "").lowercased().split(separator: ";").first.map(String.init) ?? ""
        if let byName = textTypes[ext] { return byName + "; charset=utf-8" }
        if claimed.hasPrefix("text/"), claimed != "text/html" { return claimed + "; charset=utf-8" }
        if claimed == "application/json" { return "application/json; charset=utf-8" }
        return "text/plain; charset=utf-8"
    }

    /// Types a browser may show in its own tab: images it decodes, PDF, audio, video and plain text. Everything
    /// else (HTML, SVG, XML, scripts, unknown bytes) is served as a download only.
    public static func isSafeInline(_ contentType: String) -> Bool {
        let base = contentType.lowercased().split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return inlineTypes.contains(base)
    }

    /// True for types the web UI shows as a picture.
    public static func isImage(_ contentType: String) -> Bool {
        ["image/png", "image/jpeg", "image/gif", "image/webp"].contains(
            contentType.lowercased().split(separator: ";").first.map(String.init) ?? "")
    }

    private static let inlineTypes: Set<String> = [
        "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain", "text/csv",
        "text/markdown", "application/json", "audio/mpeg", "audio/ogg", "video/mp4", "video/webm", "video/quicktime",
    ]

    private static let officeTypes: [String: String] = [
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ]

    /// Text formats by file name extension; `text/plain` for source code.
    private static let textTypes: [String: String] = {
        var types = ["csv": "text/csv", "md": "text/markdown", "markdown": "text/markdown", "json": "application/json"]
        for ext in codeExtensions { types[ext] = "text/plain" }
        return types
    }()

    /// Extensions of text files whose words are worth searching (with `.csv`, `.md`, `.json`).
    static let codeExtensions: Set<String> = [
        "txt", "log", "py", "swift", "go", "rs", "js", "ts", "java", "kt", "c", "h", "cc", "cpp", "hpp", "m", "rb",
        "php", "sh", "bash", "zsh", "sql", "yaml", "yml", "toml", "ini", "cfg", "conf", "diff", "patch", "tsv",
    ]

    private static func magic(_ p: [UInt8]) -> String? {
        func starts(_ bytes: [UInt8], at offset: Int = 0) -> Bool {
            p.count >= offset + bytes.count && Array(p[offset..<offset + bytes.count]) == bytes
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        if starts(Array("%PDF-".utf8)) { return "application/pdf" }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return "application/zip" }
        if starts([0x1F, 0x8B]) { return "application/gzip" }
        if starts(Array("ID3".utf8)) || starts([0xFF, 0xFB]) { return "audio/mpeg" }
        if starts(Array("OggS".utf8)) { return "audio/ogg" }
        if starts(Array("ftyp".utf8), at: 4) {
            return starts(Array("qt  ".utf8), at: 8) ? "video/quicktime" : "video/mp4"
        }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return "video/webm" }
        return nil
    }

    /// Valid UTF-8 without NUL; a multi-byte character cut at the end of the prefix is allowed.
    private static func isText(_ p: [UInt8]) -> Bool {
        guard !p.contains(0) else { return false }
        var index = 0
        while index < p.count {
            let byte = p[index]
            let length: Int
            switch byte {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return false
            }
            if index + length > p.count { return p.count >= 4096 }
            for next in 1..<length where p[index + next] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }
}

extension BlobWriter {
    /// Commits the bytes written as a blob when they are a PNG, JPEG, GIF or WebP image (decided from the bytes
    /// alone, never a name); otherwise discards them and returns the type they are instead. The one rule for
    /// avatars, custom emoji and thumbnails, fetched or carried with the data.
    ///
    /// - Throws: what `commit()` throws (a full disk).
    func commitImage() throws -> Result<FileBlob, NotAnImage> {
        let type = FileType.decide(prefix: prefix, name: nil, mimetype: nil)
        guard FileType.isImage(type) else {
            discard()
            return .failure(NotAnImage(type: type))
        }
        let size = self.size
        return .success(FileBlob(sha256: try commit().sha256, size: size, contentType: type))
    }

    /// Bytes that are not an image, and what they are.
    struct NotAnImage: Error {
        var type: String
    }
}
