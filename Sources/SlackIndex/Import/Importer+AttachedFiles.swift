import Foundation
import SlackIndexStore

/// What an import did with the files an export carries (slackdump's `__uploads/`).
public struct AttachedFilesSummary: Sendable, Codable, Equatable {
    /// Files found beside the messages, for files the archive's messages carry.
    public var found = 0
    /// Stored into the file store now.
    public var stored = 0
    /// Already stored (by an earlier import or `slackindex files`).
    public var alreadyThere = 0
    /// Over the size cap (`FileFetcher.defaultMaxBytes`), or unreadable: left out, each said in the notes.
    public var skipped = 0
    /// Found for a file id no message of the archive carries: left out.
    public var unknown = 0
    /// Bytes stored now.
    public var bytes: Int64 = 0

    public init() {}

    mutating func add(_ other: AttachedFilesSummary) {
        found += other.found
        stored += other.stored
        alreadyThere += other.alreadyThere
        skipped += other.skipped
        unknown += other.unknown
        bytes += other.bytes
    }

    private enum CodingKeys: String, CodingKey {
        case found, stored, skipped, unknown, bytes
        case alreadyThere = "already_there"
    }
}

extension Importer {
    /// Stores the files `source` carries for files the archive's messages name into the file store beside the
    /// archive (``FileBlobs``), as `slackindex files` would have fetched them: each under its SHA-256, its type
    /// decided from its bytes and name, its text indexed when it is text. One file is read at a time, at most
    /// `FileFetcher.defaultMaxBytes`. No network.
    ///
    /// - Throws: `FileStoreError` or `StoreError.writeFailed` when the store cannot be written (a full disk: what was
    ///   stored stays; the same import again stores the rest).
    func storeAttachedFiles(of source: any ExportSource, summary: inout ImportSummary) throws {
        let attached = source.attachedFiles
        guard !attached.isEmpty else { return }
        var result = AttachedFilesSummary()
        let known = Dictionary(try archive.archivedFiles().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var stored = try archive.fileBlobs()
        let blobs = FileBlobs(archivePath: archive.path)
        blobs.removeAbandonedTemporaries()
        for file in attached {
            guard let archived = known[file.fileID] else {
                result.unknown += 1
                continue
            }
            result.found += 1
            if let blob = stored[file.fileID], blobs.contains(blob.sha256, size: blob.size) {
                result.alreadyThere += 1
                continue
            }
            let cap = FileFetcher.defaultMaxBytes
            guard file.size <= cap else {
                result.skipped += 1
                summary.notes.append(
                    "File \(file.fileID) (\(file.name)) in the export is \(file.size) bytes, over the "
                        + "\(cap) stored per file: not stored.")
                continue
            }
            let bytes: Data
            do {
                bytes = try source.read(file, limit: UInt64(cap))
            } catch {
                result.skipped += 1
                summary.notes.append("File \(file.fileID) in the export was not stored: \(error)")
                continue
            }
            let writer = try blobs.begin()
            try bytes.withUnsafeBytes { try writer.write($0) }
            let type = FileType.decide(prefix: writer.prefix, name: file.name, mimetype: archived.mimetype)
            let size = writer.size
            let blob = FileBlob(sha256: try writer.commit().sha256, size: size, contentType: type)
            try archive.recordFileBlob(id: file.fileID, blob: blob)
            stored[file.fileID] = blob
            try FileFetcher.indexText(of: file.fileID, blob, archive: archive, blobs: blobs)
            result.stored += 1
            result.bytes += size
        }
        summary.attachedFiles = result
    }
}
