import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Reports
@testable import Scenarios

/// Renders index.html in a real headless Chromium: the page must draw every timeline without a
/// script error, and its screenshot must not be blank.
@Suite struct HTMLReportTests {
  static let chromium = "/usr/bin/chromium"
  static let available = FileManager.default.isExecutableFile(atPath: chromium)

  /// Runs Chromium headless on a file, bounded by `timeout` so a hung browser fails the test.
  static func headless(_ arguments: [String], page: String, profile: String) throws -> (
    status: Int32, output: String
  ) {
    try runTool(
      "/usr/bin/timeout",
      [
        "60", chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--no-first-run", "--user-data-dir=\(profile)",
      ] + arguments + ["file://" + page])
  }

  static func renderedState(_ dom: String) -> String? {
    guard let range = dom.range(of: "data-rendered=\"") else { return nil }
    let rest = dom[range.upperBound...]
    return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
  }

  @Test(
    .needs("needs chromium (tools/install-deps)", if: available))
  func chromiumRendersTheReportWithoutErrorsAndTheScreenshotIsNotBlank() throws {
    try #require(Self.available, "needs chromium (tools/install-deps)")
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try ReportWriter.write(makeSampleReport(), to: dir)
    let page = dir + "/index.html"

    let dom = try Self.headless(["--dump-dom"], page: page, profile: dir + "/profile")
    #expect(Self.renderedState(dom.output) == "ok", "\(dom.output.suffix(2000))")
    // One SVG timeline per scenario was drawn by the script.
    #expect(dom.output.components(separatedBy: "aria-label=\"timeline of ").count - 1 == 6)

    let png = dir + "/shot.png"
    _ = try Self.headless(
      ["--screenshot=\(png)", "--window-size=1200,900"], page: page, profile: dir + "/profile")
    #expect(FileManager.default.fileExists(atPath: png))
    let colours = try runTool(
      "/usr/bin/python3",
      [
        "-c",
        "import sys; from PIL import Image; im = Image.open(sys.argv[1]).convert('RGB'); "
          + "print(im.size[0], im.size[1], len(set(im.getdata())))",
        png,
      ])
    let numbers = colours.output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
    #expect(numbers.count == 3, "\(colours.output)")
    if numbers.count == 3 {
      #expect(numbers[0] == 1200 && numbers[1] == 900)
      // A blank or unstyled page has a handful of colours; the badges, bars and text have many.
      #expect(numbers[2] > 50, "only \(numbers[2]) distinct colours")
    }
  }

  @Test(
    .needs("needs chromium (tools/install-deps)", if: available))
  func aScriptErrorIsDetectedNotMistakenForARenderedPage() throws {
    try #require(Self.available, "needs chromium (tools/install-deps)")
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let broken = HTMLReport.render(makeSampleReport())
      .replacingOccurrences(of: "\"use strict\";", with: "\"use strict\"; null.boom();")
    let page = dir + "/index.html"
    try broken.write(toFile: page, atomically: true, encoding: .utf8)
    let dom = try Self.headless(["--dump-dom"], page: page, profile: dir + "/profile")
    let state = Self.renderedState(dom.output) ?? ""
    #expect(state.hasPrefix("error: "), "\(state)")
  }

  @Test func thePageIsSelfContained() {
    let html = HTMLReport.render(makeSampleReport())
    #expect(!html.contains("src=\""))
    #expect(!html.contains("href=\"http"))
    #expect(!html.contains("<link"))
    #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
    #expect(html.components(separatedBy: "</script>").count - 1 == 3)
  }
}

/// The timeline as issue 18 and 20 asked: labels at one instant stay readable, a legend, leaks
/// and exposure apart, a % axis, a crash and censor changes drawn, the capture linked.
@Suite struct HTMLTimelineTests {
  /// Five actions at the same instant, a Tor crash, a censor change, a 14% stall, a leak and
  /// an exposure.
  static func crowdedReport(pcap: String?) -> RunReport {
    let actions: [AppAction] = [
      AppAction(at: 10, step: .sendMessage(text: "a")),
      AppAction(at: 10, step: .pathChange(satisfied: true)),
      AppAction(at: 10, step: .background), AppAction(at: 10, step: .foreground),
      AppAction(at: 10, step: .refreshDirectory), AppAction(at: 10.2, step: .torCrash),
    ]
    let scenario = makeScenario([.noLeak], actions: actions, name: "crowded")
    var outcome = makeOutcome(
      events: [
        ev(0, "TorWillStart"), ev(10.2, "tor-crashed", ["by": "action"]),
        ev(10.2, "censor-changed", ["rules": "0", "active": "none"]),
        ev(12, "request-queued", ["kind": "message"]),
      ],
      bootstrap: [
        BootstrapSample(time: 0, progress: 0, summary: "Starting"),
        BootstrapSample(time: 3, progress: 14, summary: "Handshaking with a relay"),
      ],
      leaks: [leak(.dns, at: 20)])
    outcome.capture.pcapPath = pcap
    var result = ScenarioResult(scenario: scenario, outcome: outcome)
    result.judgement.exposure = [leak(.tcp, at: 30)]
    return RunReport(
      startedAt: "2026-12-01T00:00:00Z", versions: ["failclosed": "test"], timeScale: 25,
      results: [result])
  }

  static func attribute(_ name: String, in dom: String) -> String? {
    guard let range = dom.range(of: name + "=\"") else { return nil }
    let rest = dom[range.upperBound...]
    return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
  }

  @Test(
    .needs("needs chromium (tools/install-deps)", if: HTMLReportTests.available))
  func aCrowdedTimelineIsReadableWithALegendAnAxisAndDistinctLeakAndExposure() throws {
    try #require(HTMLReportTests.available, "needs chromium (tools/install-deps)")
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let capture = dir + "/capture.pcap"
    try Data([0xD4, 0xC3, 0xB2, 0xA1]).write(to: URL(fileURLWithPath: capture))
    try ReportWriter.write(Self.crowdedReport(pcap: capture), to: dir + "/out")
    let dom = try HTMLReportTests.headless(
      ["--dump-dom"], page: dir + "/out/index.html", profile: dir + "/profile")
    #expect(HTMLReportTests.renderedState(dom.output) == "ok", "\(dom.output.suffix(1500))")
    #expect(Self.attribute("data-label-overlaps", in: dom.output) == "0")
    // Actions at one instant share one label, every name in it, none written over another.
    #expect(
      dom.output.contains(
        ">send-message · path-change · background · foreground · refresh-directory · tor-crash</text>"
      ))
    #expect(dom.output.contains(">14% at the end (as the app read it)</text>"))
    #expect(dom.output.contains(#"class="tor-down""#), "the lane after the crash is not shaded")
    for tick in ["0%", "50%", "100%"] { #expect(dom.output.contains(">\(tick)</text>")) }
    #expect(dom.output.contains(">Tor crash</text>"))
    #expect(dom.output.contains("exposure by the user's choice (not a leak)"))
    #expect(dom.output.contains(##"fill="#c62828" class="leak""##))
    #expect(dom.output.contains(##"fill="#f9a825" class="exposure""##))
    #expect(dom.output.contains(#"href="pcaps/crowded.pcap""#))
    #expect(FileManager.default.fileExists(atPath: dir + "/out/pcaps/crowded.pcap"))
  }

  /// The canary for the self-check: labels forced onto one row are counted as overlapping.
  @Test(
    .needs("needs chromium (tools/install-deps)", if: HTMLReportTests.available))
  func overlappingLabelsAreCounted() throws {
    try #require(HTMLReportTests.available, "needs chromium (tools/install-deps)")
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let html = HTMLReport.render(Self.crowdedReport(pcap: nil))
    let squeezed = html.replacingOccurrences(
      of: "labeller(svg, laneTop(2) + 10, 12, 2)", with: "labeller(svg, laneTop(2) + 10, 0, 2)")
    #expect(squeezed != html)
    try squeezed.write(toFile: dir + "/index.html", atomically: true, encoding: .utf8)
    let dom = try HTMLReportTests.headless(
      ["--dump-dom"], page: dir + "/index.html", profile: dir + "/profile")
    #expect(HTMLReportTests.renderedState(dom.output) == "ok")
    #expect(Int(Self.attribute("data-label-overlaps", in: dom.output) ?? "") ?? 0 > 0)
  }

  @Test(
    .needs("needs chromium (tools/install-deps)", if: HTMLReportTests.available))
  func thePagePrintsToPDFWithEveryScenario() throws {
    try #require(HTMLReportTests.available, "needs chromium (tools/install-deps)")
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try ReportWriter.write(makeSampleReport(), to: dir)
    let pdf = dir + "/report.pdf"
    _ = try HTMLReportTests.headless(
      ["--print-to-pdf=\(pdf)", "--no-pdf-header-footer"], page: dir + "/index.html",
      profile: dir + "/profile")
    let bytes = try Data(contentsOf: URL(fileURLWithPath: pdf))
    let pdfText = String(decoding: bytes, as: UTF8.self)
    #expect(pdfText.hasPrefix("%PDF-"))
    // Six scenario sections: more than one page, each section kept whole (break-inside).
    let pages =
      pdfText.components(separatedBy: "/Type /Page").count - 1
      - (pdfText.components(separatedBy: "/Type /Pages").count - 1)
    #expect(pages >= 2, "\(pages) pages")
    let html = try String(contentsOfFile: dir + "/index.html", encoding: .utf8)
    #expect(html.contains("@media print{"))
    #expect(html.contains(".controls{display:none}"))
  }
}
