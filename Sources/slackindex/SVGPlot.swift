import Foundation
@_spi(Benchmarks) import SlackIndex

/// A plain SVG line chart with axes, ticks, labels, units and a legend (log scales optional).
struct SVGPlot: Sendable {
    /// One line of the chart.
    struct Series: Sendable {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]

        init(name: String, color: String, points: [(x: Double, y: Double)]) {
            self.name = name
            self.color = color
            self.points = points
        }
    }

    var title: String
    var xLabel: String
    var yLabel: String
    var logX = false
    var logY = false
    var series: [Series] = []
    var width = 760.0
    var height = 440.0

    init(title: String, xLabel: String, yLabel: String) {
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
    }

    /// The chart as an SVG document.
    ///
    /// - Complexity: O(points).
    /// Over 60 lines: the SVG is written top to bottom (frame, ticks, series, legend) in document order.
    func render() -> String {
        let left = 80.0, right = 170.0, top = 50.0, bottom = 60.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let all = series.flatMap(\.points).filter { (!logX || $0.x > 0) && (!logY || $0.y > 0) }
        func scale(_ v: Double, _ log: Bool) -> Double { log ? log10(v) : v }
        let xs = all.map { scale($0.x, logX) }
        let ys = all.map { scale($0.y, logY) }
        var (x0, x1) = (xs.min() ?? 0, xs.max() ?? 1)
        var (y0, y1) = (ys.min() ?? 0, ys.max() ?? 1)
        if logY { (y0, y1) = (floor(y0), ceil(y1)) } else { y0 = min(0, y0) }
        if logX { (x0, x1) = (floor(x0), ceil(x1)) }
        if x1 <= x0 { x1 = x0 + 1 }
        if y1 <= y0 { y1 = y0 + 1 }
        func px(_ x: Double) -> Double { left + (scale(x, logX) - x0) / (x1 - x0) * plotWidth }
        func py(_ y: Double) -> Double { top + plotHeight - (scale(y, logY) - y0) / (y1 - y0) * plotHeight }
        func label(_ v: Double) -> String {
            if v >= 1000 { return String(format: "%.0fk", v / 1000) }
            if v >= 10 || v == 0 { return String(format: "%.0f", v) }
            if v >= 1 { return String(format: "%.1f", v) }
            return String(format: "%g", v)
        }
        func ticks(_ a: Double, _ b: Double, log: Bool) -> [Double] {
            if log { return stride(from: a, through: b, by: 1).map { pow(10, $0) } }
            let step = SVGPlot.niceStep((b - a) / 5)
            return stride(from: (a / step).rounded(.up) * step, through: b + step / 1000, by: step).map { $0 }
        }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(width / 2)" y="24" text-anchor="middle" font-size="16" font-weight="bold">\(escape(title))</text>

            """
        for t in ticks(y0, y1, log: logY) {
            let y = py(t)
            svg += "<line x1=\"\(left)\" y1=\"\(y)\" x2=\"\(left + plotWidth)\" y2=\"\(y)\" stroke=\"#e5e5e5\"/>\n"
            svg += "<text x=\"\(left - 8)\" y=\"\(y + 4)\" text-anchor=\"end\">\(label(t))</text>\n"
        }
        for t in ticks(x0, x1, log: logX) {
            let x = px(t)
            svg += "<line x1=\"\(x)\" y1=\"\(top)\" x2=\"\(x)\" y2=\"\(top + plotHeight)\" stroke=\"#f0f0f0\"/>\n"
            svg += "<text x=\"\(x)\" y=\"\(top + plotHeight + 18)\" text-anchor=\"middle\">\(label(t))</text>\n"
        }
        svg += """
            <line x1="\(left)" y1="\(top + plotHeight)" x2="\(left + plotWidth)" y2="\(top + plotHeight)" stroke="black"/>
            <line x1="\(left)" y1="\(top)" x2="\(left)" y2="\(top + plotHeight)" stroke="black"/>
            <text x="\(left + plotWidth / 2)" y="\(height - 16)" text-anchor="middle">\(escape(xLabel))</text>
            <text x="18" y="\(top + plotHeight / 2)" text-anchor="middle" \
            transform="rotate(-90 18 \(top + plotHeight / 2))">\(escape(yLabel))</text>

            """
        for (index, s) in series.enumerated() {
            let points = s.points.filter { (!logX || $0.x > 0) && (!logY || $0.y > 0) }
            let path = points.map { String(format: "%.1f,%.1f", px($0.x), py($0.y)) }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(s.color)\" stroke-width=\"2\" points=\"\(path)\"/>\n"
            if points.count <= 40 {
                for p in points {
                    svg += "<circle cx=\"\(px(p.x))\" cy=\"\(py(p.y))\" r=\"3\" fill=\"\(s.color)\"/>\n"
                }
            }
            let ly = top + 10 + Double(index) * 20
            svg += "<line x1=\"\(left + plotWidth + 16)\" y1=\"\(ly)\" x2=\"\(left + plotWidth + 36)\" y2=\"\(ly)\" "
                + "stroke=\"\(s.color)\" stroke-width=\"3\"/>\n"
            svg += "<text x=\"\(left + plotWidth + 42)\" y=\"\(ly + 4)\">\(escape(s.name))</text>\n"
        }
        return svg + "</svg>\n"
    }

    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0 else { return 1 }
        let magnitude = pow(10, floor(log10(raw)))
        for m in [1.0, 2, 2.5, 5, 10] where raw <= m * magnitude { return m * magnitude }
        return 10 * magnitude
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

extension TimelineBench.Result {
    /// Latency by depth, keyset beside OFFSET (log scale).
    func plot() -> SVGPlot {
        var plot = SVGPlot(
            title: "History page of \(pageSize) by depth: keyset vs OFFSET", xLabel: "depth (messages from the newest)",
            yLabel: "latency per page (ms, log scale)")
        plot.logY = true
        plot.series = [
            .init(name: "keyset (ts, id)", color: "#1f77b4", points: depths.map { (Double($0.depth), $0.keysetMs) }),
            .init(name: "OFFSET", color: "#d62728", points: depths.map { (Double($0.depth), $0.offsetMs) }),
            .init(name: "cache hit", color: "#2ca02c", points: depths.map { (Double($0.depth), cacheHitMs) }),
        ]
        return plot
    }
}

extension SearchBench.Result {
    /// The latency distribution as a CDF: share of queries answered within x ms (log scale).
    func plot() -> SVGPlot {
        var plot = SVGPlot(
            title: "Search latency: \(queries) queries × \(runs) runs", xLabel: "latency (ms, log scale)",
            yLabel: "queries answered within (%)")
        plot.logX = true
        let sorted = samples.sorted()
        let points = sorted.enumerated().map { (max($0.element, 0.01), Double($0.offset + 1) / Double(sorted.count) * 100) }
        plot.series = [.init(name: "all queries", color: "#1f77b4", points: points)]
        return plot
    }
}
