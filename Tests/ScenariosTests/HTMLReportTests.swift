import FailClosedSupport
import Foundation
import Testing

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

  @Test(.enabled(if: Privilege.mayRun(needing: available), "needs chromium (tools/install-deps)"))
  func chromiumRendersTheReportWithoutErrorsAndTheScreenshotIsNotBlank() throws {
    try #require(Self.available, "needs chromium (tools/install-deps)")
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try ReportWriter.write(makeSampleReport(), to: dir)
    let page = dir + "/index.html"

    let dom = try Self.headless(["--dump-dom"], page: page, profile: dir + "/profile")
    #expect(Self.renderedState(dom.output) == "ok", "\(dom.output.suffix(2000))")
    // One SVG timeline per scenario was drawn by the script.
    #expect(dom.output.components(separatedBy: "<svg").count - 1 == 6)

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

  @Test(.enabled(if: Privilege.mayRun(needing: available), "needs chromium (tools/install-deps)"))
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
