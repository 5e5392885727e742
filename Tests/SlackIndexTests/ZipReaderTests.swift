import Foundation
import Synchronization
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// The hand-written zip reader: formats export tools write, and every way a zip can be broken.
@Suite struct ZipReaderTests {
    static let good = MalformedInputTests.good

    static func write(_ zip: ZipWriter, _ name: String) throws -> URL {
        let url = TestSupport.temporaryDirectory().appendingPathComponent(name)
        try zip.data().write(to: url)
        return url
    }

    static func importZip(_ url: URL) throws -> ImportSummary {
        try Importer(archive: TestSupport.makeArchive()).importExport(at: url.path)
    }

    @Test func zip64SizesAndOffsetsAreRead() throws {
        var zip = ZipWriter()
        zip.zip64 = true
        zip.add("channels.json", #"[{"id": "C1", "name": "general"}]"#)
        zip.add("general/2023-11-14.json", Self.good)
        zip.add("general/2023-11-15.json", Self.good.replacingOccurrences(of: "0100", with: "0200"))
        let summary = try Self.importZip(Self.write(zip, "zip64.zip"))
        #expect(summary.messagesAdded == 2)
        #expect(!summary.hasSkips)
    }

    /// The zip's listing: listings and day files inside a wrapping folder, day files read by their entry (and
    /// named `zip:path`), everything else reported, beside the wrapping folder too.
    @Test func aWrappedExportsDayFilesListingsAndOddEntries() throws {
        var zip = ZipWriter()
        zip.add("export/channels.json", #"[{"id": "C1", "name": "général"}, {"id": "C2", "name": "random"}]"#)
        zip.add("export/users.json", "[]")
        zip.add("export/général/2023-11-14.json", Self.good)
        zip.add("export/général/2023-11-15.json", Self.good.replacingOccurrences(of: "0100", with: "0200"))
        zip.add("export/random/2023-11-14.json", Self.good.replacingOccurrences(of: "0100", with: "0300"))
        zip.add("export/random/notes.txt", "not a day")
        zip.add("export/integration_logs.json", #"{"logs": [1]}"#)
        zip.add("export/integration_logs.json", #"{"logs": []}"#)  // the same name twice: the last is read
        zip.add("export/random/.DS_Store", "hidden")
        zip.add("export/random/deeper/2023-11-14.json", Self.good)
        zip.add("export/__MACOSX/random/._2023-11-14.json", "resource fork")
        zip.add("export/../2023-11-14.json", Self.good)
        zip.add("elsewhere/2023-11-14.json", Self.good)
        let url = try Self.write(zip, "wrapped.zip")
        let source = try ZipExportSource(path: url.path)
        #expect(source.dayFiles.map { "\(source.folder(of: $0))/\($0.name)" } == [
            "général/2023-11-14.json", "random/2023-11-14.json", "général/2023-11-15.json",
        ])
        #expect(source.dayFiles.map(source.displayPath(of:)) == source.dayFiles.map {
            "\(url.path):export/\(source.folder(of: $0))/\($0.name)"
        })
        #expect(source.folders == ["général", "random"])
        // What lies beside the wrapping folder is reported too: a day file there is not read.
        #expect(source.ignoredFiles == [
            "\(url.path):elsewhere/2023-11-14.json",
            "\(url.path):export/__MACOSX/random/._2023-11-14.json", "\(url.path):export/integration_logs.json",
            "\(url.path):export/random/deeper/2023-11-14.json",
            "\(url.path):export/random/notes.txt",
        ])
        #expect(source.unreadable.map(\.path) == ["\(url.path):export/../2023-11-14.json"])
        #expect(try source.listing("channels.json").map { String(decoding: $0, as: UTF8.self) }?.contains("général") == true)
        #expect(try source.listing("users.json") == Data("[]".utf8))
        #expect(try source.listing("groups.json") == nil)
        // Any file beside the folders is found by name, not only the listings.
        #expect(try source.listing("integration_logs.json") == Data(#"{"logs": []}"#.utf8))
        #expect(try source.listing("random") == nil)
        // Each folder's listed bytes are its day files' bytes.
        var bytesRead = [Int64](repeating: 0, count: source.places.count)
        for file in source.dayFiles { bytesRead[Int(file.folderIndex)] += Int64(try source.read(file).count) }
        #expect(source.dayFiles.bytesByPlace == bytesRead && bytesRead.allSatisfy { $0 > 0 })
        #expect(String(decoding: try source.read(source.dayFiles[2]), as: UTF8.self).contains("0200"))
        // Entries of one folder share one record of its strings.
        let first = source.dayFiles[0]
        let second = source.dayFiles[2]
        #expect(first.folderIndex == second.folderIndex && source.place(of: first) === source.place(of: second))
        // What the import holds while listing, per directory entry (the directory is never held whole).
        #expect(MemoryLayout<ZipReader.Entry>.stride <= 40)
        let summary = try Self.importZip(url)
        #expect(summary.messagesAdded == 3)
    }

    @Test func dayNumbersSortAndNameAsTheirFileNames() throws {
        var generator = SystemRandomNumberGenerator()
        var names = ["0000-00-00.json", "9999-99-99.json", "0007-01-09.json", "2024-01-15.json", "2024-10-05.json"]
        for _ in 0..<500 {
            names.append(String(format: "%04d-%02d-%02d.json", Int.random(in: 0...9999, using: &generator),
                Int.random(in: 0...99, using: &generator), Int.random(in: 0...99, using: &generator)))
        }
        let entries = try names.map {
            try DayFileEntry(folderIndex: 0, day: #require(dayNumber(ofDayFileName: $0)))
        }
        #expect(entries.map(\.name) == names)
        #expect(entries.sorted { $0.day < $1.day }.map(\.name) == names.sorted())
        #expect(dayNumber(ofDayFileName: "2024-01-15.json") == 20_240_115)
        for name in ["2024-1-15.json", "2024-01-15.jsn", "2024-01-1x.json", "2024_01_15.json", "２０２４-01-15.json", ""] {
            #expect(dayNumber(ofDayFileName: name) == nil, "\(name)")
        }
    }

    @Test func dayFileListsKeepEveryFileInDateThenFolderOrderWithItsFolderAndRecord() {
        var generator = SystemRandomNumberGenerator()
        let folderNames = ["zeta", "alpha", "Mid", "beta", "éclair", "alpha-2"]
        for count in [0, 1, 2, 7, 300] {
            var places = folderNames.map { DayFolder(folder: $0, container: $0 + "/") }
            let bytes = folderNames.indices.map { Int64($0) * 1_000 + 7 }
            let entries = (0..<count).map { index in
                DayFileEntry(
                    folderIndex: UInt32.random(in: 0..<UInt32(folderNames.count), using: &generator),
                    day: [20_240_101, 20_231_231, 20_240_102, 99_991_231].randomElement(using: &generator)!,
                    record: UInt32(index) &* 2_654_435_761)
            }
            // What each file must come out as: the folder by name, ordered by date, folder name, then listing order.
            let expected = entries.enumerated()
                .map { (day: $1.day, folder: folderNames[Int($1.folderIndex)], record: $1.record, listed: $0) }
                .sorted { ($0.day, $0.folder, $0.listed) < ($1.day, $1.folder, $1.listed) }
                .map { (day: $0.day, folder: $0.folder, record: $0.record) }
            var taken = entries
            let list = DayFileList(taking: &taken, bytesByPlace: bytes, places: &places)
            #expect(taken.isEmpty)
            #expect(places.map(\.folder) == folderNames.sorted())
            #expect(list.count == count)
            let listed = list.map { (day: $0.day, folder: places[Int($0.folderIndex)].folder, record: $0.record) }
            #expect(listed.elementsEqual(expected) { $0 == $1 }, "\(count) files")
            #expect(Array(list.folderIndices) == list.map(\.folderIndex))
            // The same files date by date, each date once.
            let byDay = list.days.flatMap { day in day.files.map { list.file(at: $0, of: day) } }
            #expect(byDay.map(\.day) == list.map(\.day) && byDay.map(\.record) == list.map(\.record))
            #expect(list.days.map(\.number) == Array(Set(entries.map(\.day))).sorted())
            // Each folder's bytes follow it to its new index.
            #expect(zip(places, list.bytesByPlace).allSatisfy { place, bytes in
                bytes == Int64(folderNames.firstIndex(of: place.folder)!) * 1_000 + 7
            })
            #expect(list.bytes == bytes.reduce(0, +))
        }
    }

    @Test func progressCountsTheBytesOfEveryDayFileReadOnce() throws {
        for path in [TestSupport.sampleZip, TestSupport.sampleFolder] {
            let seen = Mutex<[ImportProgress]>([])
            let summary = try Importer(archive: TestSupport.makeArchive(), batchSize: 50).importPaths([path]) {
                progress in seen.withLock { $0.append(progress) }
            }
            let steps = seen.withLock { $0 }
            let last = try #require(steps.last)
            #expect(steps.count > 3, "\(path)")
            #expect(last.bytesDone == last.bytesTotal && last.bytesTotal == summary.bytes && summary.bytes > 100_000)
            #expect(last.filesDone == last.filesTotal && last.filesTotal == summary.dayFiles)
            #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.bytesDone <= $1.bytesDone })
        }
    }

    @Test func littleEndianFieldsAreReadFromTheDataStart() {
        let whole = Data([0xEE, 0x50, 0x4B, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xFF])
        let slice = whole[1...]  // indices 1..<11: offsets count from the slice's start
        #expect(ZipReader.u16(slice, 0) == 0x4B50 && ZipReader.u32(slice, 0) == 0x0201_4B50)
        #expect(ZipReader.u32(slice, 3) == 0x0504_0302 && ZipReader.u64(slice, 2) == 0xFF07_0605_0403_0201)
        #expect(ZipReader.u16(whole, 9) == 0xFF07)
    }

    @Test func deflatedEntriesMatchTheFolder() throws {
        // sample-data/export.zip is deflated by the generator; every entry must inflate to the folder's bytes.
        let reader = try ZipReader(path: TestSupport.sampleZip)
        let files = reader.entries.filter { !$0.isDirectory }
        #expect(files.count > 100)
        #expect(files.contains { $0.location.method == 8 })
        for entry in files {
            let folderFile = URL(fileURLWithPath: TestSupport.sampleFolder).appendingPathComponent(reader.path(of: entry))
            #expect(try reader.data(of: entry) == Data(contentsOf: folderFile), "\(reader.path(of: entry))")
        }
    }

    @Test func encryptedAndUnknownMethodEntriesAreReportedAndTheRestImports() throws {
        var zip = ZipWriter()
        zip.add("channels.json", #"[{"id": "C1", "name": "general"}]"#)
        zip.add("general/2023-11-14.json", Self.good)
        zip.add(
            nameBytes: Array("general/2023-11-15.json".utf8), contents: Data(Self.good.utf8), utf8Flag: true,
            flags: 1)
        zip.add(
            nameBytes: Array("general/2023-11-16.json".utf8), contents: Data(Self.good.utf8), utf8Flag: true,
            method: 12)
        let summary = try Self.importZip(Self.write(zip, "odd.zip"))
        #expect(summary.messagesAdded == 1)
        let reasons = summary.skippedFiles.map(\.reason).joined(separator: "\n")
        #expect(reasons.contains("encrypted"))
        #expect(reasons.contains("compression method 12"))
        #expect(summary.skippedFiles.allSatisfy { $0.path.contains("odd.zip:general/2023-11-1") })
    }

    @Test(arguments: [0.5, 0.97])
    func truncatedZipSaysSo(keeping fraction: Double) throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: TestSupport.sampleZip))
        let url = TestSupport.temporaryDirectory().appendingPathComponent("cut.zip")
        try whole.prefix(Int(Double(whole.count) * fraction)).write(to: url)
        #expect {
            try Importer.openSource(url.path)
        } throws: { error in
            "\(error)".contains("cut.zip") && "\(error)".contains("not a readable zip file")
        }
    }

    @Test func damagedDeflateDataIsReported() throws {
        let reader = try ZipReader(path: TestSupport.sampleZip)
        let entry = try #require(reader.entries.first { $0.location.method == 8 && $0.location.compressedSize > 200 })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: TestSupport.sampleZip))
        // Overwrite the middle of the entry's compressed data.
        let middle = Int(entry.location.localHeaderOffset) + 30 + reader.path(of: entry).utf8.count
            + Int(entry.location.compressedSize) / 2
        for index in middle..<middle + 16 { bytes[index] ^= 0x5A }
        let url = TestSupport.temporaryDirectory().appendingPathComponent("damaged.zip")
        try bytes.write(to: url)
        let damaged = try ZipReader(path: url.path)
        let same = try #require(damaged.entries.first { damaged.path(of: $0) == reader.path(of: entry) })
        #expect {
            try damaged.data(of: same)
        } throws: { error in
            let text = "\(error)"
            return text.contains("corrupt")
        }
    }

    /// libdeflate inflates into exactly the recorded size: data that gives one byte more or less is refused.
    @Test func anEntryThatDoesNotInflateToItsRecordedSizeIsCorrupt() throws {
        let reader = try ZipReader(path: TestSupport.sampleZip)
        let entry = try #require(reader.entries.first { $0.location.method == 8 && $0.location.uncompressedSize > 1 })
        #expect(try reader.file.data(at: entry.location).count == Int(entry.location.uncompressedSize))
        for wrong in [entry.location.uncompressedSize - 1, entry.location.uncompressedSize + 1] {
            var location = entry.location
            location.uncompressedSize = wrong
            #expect {
                try reader.file.data(at: location)
            } throws: { error in
                "\(error)".contains("does not inflate to its recorded size")
            }
        }
    }

    @Test func emptyEntriesReadAsEmpty() throws {
        var zip = ZipWriter()
        zip.add("channels.json", #"[{"id": "C1", "name": "general"}]"#)
        zip.add("general/2023-11-14.json", "")
        zip.add("general/2023-11-15.json", Self.good)
        let url = try Self.write(zip, "empty.zip")
        let reader = try ZipReader(path: url.path)
        let empty = try #require(reader.entries.first { reader.path(of: $0).hasSuffix("14.json") })
        #expect(try reader.data(of: empty).isEmpty)
        let summary = try Self.importZip(url)
        #expect(summary.messagesAdded == 1)
        #expect(summary.skippedFiles.map(\.path) == ["\(url.path):general/2023-11-14.json"])
    }

    @Test func namesDecode() {
        #expect(ZipReader.codePage437High.count == 128)
        #expect(ZipReader.decodeName(Data("caf".utf8) + Data([0x82]), utf8Flag: false) == "café")
        #expect(ZipReader.decodeName(Data("équipe".utf8), utf8Flag: false) == "équipe")
        #expect(ZipReader.decodeName(Data("東京".utf8), utf8Flag: true) == "東京")
        #expect(ZipReader.decodeName(Data([0x41, 0xE1]), utf8Flag: false) == "Aß")
    }

    /// The directory read in chunks of any size gives the records one whole read gives, each found again by its
    /// offset (`ZipReader.record(at:)`, what a day file's entry keeps): records that straddle chunks, a ZIP64 zip,
    /// a name longer than the first read of a record.
    @Test(arguments: [false, true])
    func theDirectoryScansAlikeInAnyChunkSize(zip64: Bool) throws {
        var zip = ZipWriter()
        zip.zip64 = zip64
        zip.add("channels.json", #"[{"id": "C1", "name": "general"}]"#)
        zip.add("general/2023-11-14.json", Self.good)
        zip.add("general/" + String(repeating: "n", count: 700) + ".txt", "a long name")
        zip.add("général/2023-11-15.json", Self.good.replacingOccurrences(of: "0100", with: "0200"))
        let url = try Self.write(zip, zip64 ? "chunks64.zip" : "chunks.zip")
        let file = try ZipFile(path: url.path)
        let directory = try ZipReader.findDirectory(in: file)
        func scan(_ chunk: Int) throws -> [String] {
            var records: [String] = []
            try ZipReader.scanDirectory(directory, of: file, chunkSize: chunk) { offset, location, name in
                let again = try ZipReader.record(at: offset, of: directory, in: file)
                #expect(again.name == name && "\(again.location)" == "\(location)")
                records.append("\(offset) \(name) \(location)")
            }
            return records
        }
        let whole = try scan(Int(directory.size))
        #expect(whole.count == 4 && whole[2].contains(String(repeating: "n", count: 700)))
        let reader = try ZipReader(path: url.path)
        #expect(whole.map { String($0.split(separator: " ")[1]) } == reader.entries.map { reader.path(of: $0) })
        for chunk in [1, 7, 45, 46, 47, 100, 4096] {
            #expect(try scan(chunk) == whole, "chunk \(chunk)")
        }
        // A directory declaring one record more than it holds is damaged, whatever the chunk size.
        let short = ZipReader.Directory(offset: directory.offset, size: directory.size, count: directory.count + 1)
        for chunk in [7, 1 << 20] {
            #expect {
                try ZipReader.scanDirectory(short, of: file, chunkSize: chunk) { _, _, _ in }
            } throws: { error in
                "\(error)" == "the central directory is damaged at entry 5"
            }
        }
        // An offset that is not a record's start is refused, not read as one.
        #expect(throws: ZipReader.Failure.self) { try ZipReader.record(at: 1, of: directory, in: file) }
        #expect(throws: ZipReader.Failure.self) { try ZipReader.record(at: directory.size, of: directory, in: file) }
    }

    /// A zip replaced during its import (another export saved over it): a day file's directory record is read
    /// again when the file is, and one that names another file is reported, never read as this one.
    @Test func aZipReplacedDuringTheImportIsReportedNotMisread() throws {
        var first = ZipWriter()
        first.add("channels.json", #"[{"id": "C1", "name": "alpha"}, {"id": "C2", "name": "bravo"}]"#)
        first.add("alpha/2023-11-14.json", Self.good)
        first.add("bravo/2023-11-14.json", Self.good.replacingOccurrences(of: "0100", with: "0300"))
        let url = try Self.write(first, "replaced.zip")
        let source = try ZipExportSource(path: url.path)
        #expect(source.dayFiles.count == 2)
        #expect(String(decoding: try source.read(source.dayFiles[0]), as: UTF8.self).contains("0100"))
        // The same entries in the other order: each record now lies where the other's was.
        var second = ZipWriter()
        second.add("channels.json", #"[{"id": "C1", "name": "alpha"}, {"id": "C2", "name": "bravo"}]"#)
        second.add("bravo/2023-11-14.json", Self.good.replacingOccurrences(of: "0100", with: "0300"))
        second.add("alpha/2023-11-14.json", Self.good)
        try second.data().write(to: url)
        // Every day file's read is refused with a reason holding all of `fragments`.
        func expectEveryReadRefused(_ fragments: (DayFileEntry) -> [String]) {
            for file in source.dayFiles {
                #expect {
                    try source.read(file)
                } throws: { error in
                    fragments(file).allSatisfy { "\(error)".contains($0) }
                }
            }
        }
        expectEveryReadRefused {
            [
                "no longer reads as when it was listed", "lists another file where this one was",
                source.displayPath(of: $0),
            ]
        }
        // Overwritten by a zip of another size (its directory elsewhere): reported the same way, never read.
        var third = ZipWriter()
        third.add("channels.json", #"[{"id": "C1", "name": "alpha"}]"#)
        third.add("alpha/2023-11-14.json", Self.good + String(repeating: " ", count: 300))
        try third.data().write(to: url)
        expectEveryReadRefused { _ in ["no longer reads as when it was listed"] }
    }

    /// Folders listed out of name order: the day files still go by date, then folder name, and each keeps its own
    /// folder (the folders are renumbered in name order); a folder without day files is not a conversation to import.
    @Test func dayFilesSortByDateThenFolderNameWhateverTheZipsOrder() throws {
        var writer = ZipWriter()
        writer.add("channels.json", #"[{"id": "C1", "name": "zulu"}, {"id": "C2", "name": "alpha"}]"#)
        writer.add("zulu/2023-11-14.json", Self.good)
        writer.add("zulu/2023-11-15.json", Self.good.replacingOccurrences(of: "0100", with: "0200"))
        writer.add("notes/readme.txt", "not a conversation")
        writer.add("alpha/2023-11-15.json", Self.good.replacingOccurrences(of: "0100", with: "0400"))
        writer.add("alpha/2023-11-14.json", Self.good.replacingOccurrences(of: "0100", with: "0300"))
        let url = try Self.write(writer, "unordered.zip")
        let source = try ZipExportSource(path: url.path)
        #expect(source.folders == ["alpha", "notes", "zulu"])
        #expect(source.dayFiles.map { "\(source.folder(of: $0))/\($0.name)" } == [
            "alpha/2023-11-14.json", "zulu/2023-11-14.json", "alpha/2023-11-15.json", "zulu/2023-11-15.json",
        ])
        let texts = try source.dayFiles.map { String(decoding: try source.read($0), as: UTF8.self) }
        #expect(zip(["0300", "0100", "0400", "0200"], texts).allSatisfy { $1.contains($0) })
        let summary = try Self.importZip(url)
        #expect(summary.messagesAdded == 4)
        #expect(summary.conversationsAdded == 2)
    }
}
