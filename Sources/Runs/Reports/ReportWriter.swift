import FailClosedSupport
import Foundation
import Scenarios

/// Writes every report of a run into a directory (`--report DIR`, `reports/` by default), and
/// copies the pcap of each scenario that did not pass (of each, with `keepAllPcaps`) into
/// DIR/pcaps/ first, so the reports name the copy (`pcaps/NAME.pcap`, relative to DIR, which
/// the HTML links to) and never the run's working directory, which is removed afterwards. The
/// only I/O of the reports; the renderers are pure.
public enum ReportWriter {
  public static let fileNames = [
    "report.json", "junit.xml", "sarif.json", "summary.md", "index.html",
  ]

  /// Returns the paths written.
  @discardableResult
  public static func write(_ report: RunReport, to directory: String, keepAllPcaps: Bool = false)
    throws -> [String]
  {
    let fm = FileManager.default
    try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var placed = report
    var written: [String] = []
    for index in placed.results.indices {
      let r = placed.results[index]
      let kept = keepAllPcaps || r.verdict != .pass
      guard kept, let pcap = r.outcome.capture.pcapPath, fm.fileExists(atPath: pcap) else {
        // A capture not kept is removed with the working directory: name none.
        placed.results[index].outcome.capture.pcapPath = nil
        continue
      }
      try fm.createDirectory(atPath: directory + "/pcaps", withIntermediateDirectories: true)
      let relative = "pcaps/\(r.scenario.name).pcap"
      let target = directory + "/" + relative
      // Written again into the same directory, the capture may already be the copy.
      if absolute(pcap) != absolute(target) {
        try AtomicFile.copy(from: pcap, to: target)
      }
      written.append(target)
      placed.results[index].outcome.capture.pcapPath = relative
    }
    let contents = [
      JSONReport.render(placed), JUnitReport.render(placed), SARIFReport.render(placed),
      MarkdownSummary.render(placed), HTMLReport.render(placed),
    ]
    var reports: [String] = []
    for (name, text) in zip(fileNames, contents) {
      let path = directory + "/" + name
      // Whole or not at all: a full disk leaves no half report under the final name.
      try AtomicFile.write(text, to: path)
      reports.append(path)
    }
    return reports + written
  }

  static func absolute(_ path: String) -> String {
    URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
  }
}
