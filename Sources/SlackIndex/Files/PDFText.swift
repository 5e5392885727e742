import Foundation

/// A PDF's text through poppler's `pdftotext` (Debian's `poppler-utils`), when it is installed: the only way a PDF's
/// words reach search. Without it a PDF is stored and served, and its text is not indexed (the `files` report says
/// how many); installing it and running `slackindex files` again indexes them.
enum PDFText {
    /// `pdftotext` on the PATH (or in /usr/bin), found once; `SLACKINDEX_PDFTOTEXT` names another (a path that is
    /// not an executable, or empty, means none).
    static let tool: String? = {
        if let chosen = ProcessInfo.processInfo.environment["SLACKINDEX_PDFTOTEXT"] {
            return FileManager.default.isExecutableFile(atPath: chosen) ? chosen : nil
        }
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for folder in folders + ["/usr/bin", "/usr/local/bin"] {
            let path = folder + "/pdftotext"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }()

    static var isAvailable: Bool { tool != nil }

    /// Pages read at most: a long PDF's first pages say what it is about; its whole text is not needed.
    static let maximumPages = 100
    /// Seconds `pdftotext` may take before it is stopped (a hostile or broken PDF).
    static let timeoutSeconds = 20.0

    /// The text of the PDF at `path`, at most `maxBytes` of it; nil when `pdftotext` is absent, fails or finds no
    /// text (a scanned PDF without a text layer).
    ///
    /// - Complexity: one process; O(pages read).
    static func extract(path: String, maxBytes: Int) -> String? {
        guard let tool else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-q", "-enc", "UTF-8", "-l", String(maximumPages), "--", path, "-"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let timer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeoutSeconds, execute: timer)
        var data = Data()
        let reader = output.fileHandleForReading
        while data.count < maxBytes, let chunk = try? reader.read(upToCount: min(65_536, maxBytes - data.count)),
            !chunk.isEmpty
        {
            data.append(chunk)
        }
        if process.isRunning { process.terminate() }
        try? reader.close()
        process.waitUntilExit()
        timer.cancel()
        let text = String(decoding: data, as: UTF8.self)
        return text.contains(where: { $0.isLetter || $0.isNumber }) ? text : nil
    }
}
