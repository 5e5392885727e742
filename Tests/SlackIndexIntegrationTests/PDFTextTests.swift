import Foundation
import Testing

@testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// A PDF's words are searchable when poppler's `pdftotext` is installed; without it the PDF is stored and served,
/// its text not indexed, and the report says so. Runs when `pdftotext` is on the PATH; with
/// `SLACKINDEX_REQUIRE_PDFTOTEXT=1` (CI) it always runs and fails when it is missing.
@Suite struct PDFTextTests {
    static let required = ProcessInfo.processInfo.environment["SLACKINDEX_REQUIRE_PDFTOTEXT"] == "1"

    /// A one-page PDF whose only text is `text` (Helvetica), with a correct cross-reference table.
    static func pdf(_ text: String) -> [UInt8] {
        let stream = "BT /F1 18 Tf 72 720 Td (\(text)) Tj ET"
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
            "<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
        var out = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, body) in objects.enumerated() {
            offsets.append(out.utf8.count)
            out += "\(index + 1) 0 obj\n\(body)\nendobj\n"
        }
        let xref = out.utf8.count
        out += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { out += String(format: "%010d 00000 n \n", offset) }
        out += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(out.utf8)
    }

    static let word = "xylophonequarterly"

    @Test(.enabled(if: required || PDFText.isAvailable, "needs pdftotext (poppler-utils)"))
    func aWordOnlyInAPDFFindsItsMessageAndWithoutPdftotextTheReportSaysSo() async throws {
        try #require(PDFText.isAvailable, "SLACKINDEX_REQUIRE_PDFTOTEXT=1 but pdftotext is missing")
        let export = try TestSupport.minimalExport(days: [
            "2024-04-24": "[" + #"{"type":"message","user":"U1","text":"the numbers","ts":"1714000000.000100","files":[\#(FileFetchTests.file("FPDF", name: "report.pdf", mimetype: "application/pdf"))]}"# + "]",
        ])
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: export.path)
        let host = FileHostStandIn(["FPDF": .ok(Self.pdf("Quarterly \(Self.word) figures"))])
        let base = try await host.start()
        let arguments = ["--db", archive.path, "files", "--file-host", base, "--quiet", "--no-avatars", "--no-emoji"]
        let config = TestSupport.temporaryDirectory().path
        let environment = ["SLACK_TOKEN": "xoxp-test-token", "XDG_CONFIG_HOME": config]

        // Without pdftotext: stored, served, not searchable, and said.
        var without = environment
        without["SLACKINDEX_PDFTOTEXT"] = "/nonexistent/pdftotext"
        let first = try await CLITests.run(arguments, environment: without)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("1 PDFs are stored but their text is not searchable: install poppler-utils"), "\(first.stdout)")
        #expect(try archive.store.fileBlob(id: "FPDF")?.contentType == "application/pdf")
        #expect(try SearchEngine(archive: archive).search(Self.word).hits.isEmpty)

        // With it, the same command again indexes the stored PDF without fetching it.
        let second = try await CLITests.run(arguments, environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!second.stdout.contains("not searchable"))
        #expect(host.requests("FPDF") == 1)
        let hits = try SearchEngine(archive: archive).search(Self.word).hits
        #expect(hits.map(\.message.text) == ["the numbers"])
        #expect(hits.first?.matchedFile == "report.pdf")
        #expect(hits.first?.snippet.contains(Self.word) == true, "\(hits.first?.snippet ?? "")")
        await host.stop()
    }

    @Test(.enabled(if: required || PDFText.isAvailable, "needs pdftotext (poppler-utils)"))
    func brokenPDFsGiveNoText() throws {
        let folder = TestSupport.temporaryDirectory()
        for (name, bytes) in [("empty.pdf", [UInt8]()), ("garbage.pdf", Array("%PDF-1.4 not really".utf8) + Array(repeating: 0xFF, count: 5000))] {
            let path = folder.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(PDFText.extract(path: path, maxBytes: 1 << 18) == nil, "\(name)")
        }
        let path = folder.appendingPathComponent("ok.pdf").path
        try Data(Self.pdf("hello \(Self.word)")).write(to: URL(fileURLWithPath: path))
        #expect(PDFText.extract(path: path, maxBytes: 1 << 18)?.contains(Self.word) == true)
        #expect(PDFText.extract(path: path, maxBytes: 8)?.utf8.count ?? 0 <= 8)
    }
}
