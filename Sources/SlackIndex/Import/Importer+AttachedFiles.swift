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
    /// Bytes of files stored now.
    public var bytes: Int64 = 0
    /// Bytes of avatars stored now.
    public var avatarBytes: Int64 = 0
    /// Members' avatars stored now from slackdump's `__avatars/<user id>/<name>` (beside a `slackdump.sqlite`).
    public var avatars = 0
    /// Avatars found there that were not stored: not an image, over `ImageFetcher.defaultMaxBytes`, unreadable, or of
    /// a member the archive has no profile picture for.
    public var avatarsNotStored = 0

    public init() {}

    mutating func add(_ other: AttachedFilesSummary) {
        found += other.found
        stored += other.stored
        alreadyThere += other.alreadyThere
        skipped += other.skipped
        unknown += other.unknown
        bytes += other.bytes
        avatars += other.avatars
        avatarBytes += other.avatarBytes
        avatarsNotStored += other.avatarsNotStored
    }

    private enum CodingKeys: String, CodingKey {
        case found, stored, skipped, unknown, bytes, avatars
        case alreadyThere = "already_there"
        case avatarsNotStored = "avatars_not_stored"
        case avatarBytes = "avatar_bytes"
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
        try storeAttachedFiles(source.attachedFiles, read: source.read, summary: &summary)
    }

    /// Stores the files and avatars slackdump keeps beside its database (`__uploads/<file id>/<name>`,
    /// `__avatars/<user id>/<name>`) in `folder`, as an export's attached files are stored; nothing when it has
    /// neither. Called once the database's users and messages are written (files are stored for the messages that
    /// carry them, avatars for the members that have a profile picture).
    ///
    /// - Throws: what `storeAttachedFiles` throws.
    func storeSlackdumpFolderFiles(in folder: String, summary: inout ImportSummary) throws {
        let root = ExportFiles.resolved(folder) ?? folder
        let uploads = root + "/__uploads"
        if case .success(.folder) = ExportFiles.kind(of: uploads, inside: root) {
            let found = AttachedFile.uploads(in: uploads, root: root)
            summary.ignoredFiles += found.ignored
            summary.skippedFiles += found.unreadable
            try storeAttachedFiles(
                found.files,
                read: { file, limit in
                    guard case .path(let path) = file.place else {
                        throw ImportError.unreadable(path: uploads, reason: "not in this folder")
                    }
                    return try AttachedFile.read(path, inside: root, limit: limit)
                }, summary: &summary)
        }
        let avatars = root + "/__avatars"
        if case .success(.folder) = ExportFiles.kind(of: avatars, inside: root) {
            try storeAttachedAvatars(in: avatars, root: root, summary: &summary)
        }
    }

    /// Stores slackdump's `__avatars/<user id>/<name>` (each member's profile picture, in its original size) as
    /// the members' avatars, as `slackindex files` would have fetched them: only PNG, JPEG, GIF or WebP bytes, at
    /// most `ImageFetcher.defaultMaxBytes`, for members whose profile picture's URL the archive holds (recorded
    /// from the users); the stored picture stands for that URL, so `files` does not fetch it again, and fetches
    /// a picture changed since. No network.
    ///
    /// - Throws: `FileStoreError` or `StoreError.writeFailed` when the store cannot be written.
    /// - Complexity: O(n) reads for the folder's n avatars.
    private func storeAttachedAvatars(in folder: String, root: String, summary: inout ImportSummary) throws {
        guard case .success(let users) = ExportFiles.names(in: folder) else {
            summary.skippedFiles.append(.init(path: folder, reason: "the folder cannot be read"))
            return
        }
        var result = summary.attachedFiles ?? AttachedFilesSummary()
        let known = Dictionary(
            try archive.workspaceImages(.avatar).map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let blobs = FileBlobs(archivePath: archive.path)
        blobs.removeAbandonedTemporaries()
        for user in users.names.sorted() {
            let userFolder = folder + "/" + user
            // The picture: the folder's first file that is not a dot-file (`._x.png`, `.DS_Store`).
            guard case .success(.folder) = ExportFiles.kind(of: userFolder, inside: root),
                case .success(let names) = ExportFiles.names(in: userFolder),
                let name = names.names.sorted().first(where: { !$0.hasPrefix(".") })
            else {
                summary.ignoredFiles.append(userFolder)
                continue
            }
            guard let image = known[user] else {
                result.avatarsNotStored += 1
                summary.notes.append("Avatar \(userFolder)/\(name): no member \(user) with a profile picture: not stored.")
                continue
            }
            if let blob = image.blob, image.fetchedURL == image.url, blobs.contains(blob.sha256, size: blob.size) {
                continue
            }
            let bytes: Data
            do {
                bytes = try AttachedFile.read(
                    userFolder + "/" + name, inside: root, limit: UInt64(ImageFetcher.defaultMaxBytes))
            } catch {
                result.avatarsNotStored += 1
                summary.notes.append("Avatar of \(user) was not stored: \(error)")
                continue
            }
            let writer = try blobs.begin()
            try bytes.withUnsafeBytes { try writer.write($0) }
            switch try writer.commitImage() {
            case .failure(let other):
                result.avatarsNotStored += 1
                summary.notes.append("Avatar \(userFolder)/\(name) is not an image (\(other.type)): not stored.")
            case .success(let blob):
                try archive.recordImageBlob(.avatar, key: user, url: image.url, blob: blob)
                result.avatars += 1
                result.avatarBytes += blob.size
            }
        }
        if result != AttachedFilesSummary() { summary.attachedFiles = result }
    }

    /// Stores `attached` (read through `read`) for files the archive's messages name, as `storeAttachedFiles(of:)`.
    private func storeAttachedFiles(
        _ attached: [AttachedFile], read: (AttachedFile, UInt64) throws -> Data, summary: inout ImportSummary
    ) throws {
        guard !attached.isEmpty else { return }
        var result = summary.attachedFiles ?? AttachedFilesSummary()
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
                bytes = try read(file, UInt64(cap))
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
