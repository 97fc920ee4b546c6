import FailClosedSupport
import Foundation

/// Writes every report of a run into a directory (`--report DIR`), and copies the pcap of each
/// scenario that did not pass into DIR/pcaps/. The only I/O of the reports; the renderers
/// are pure.
public enum ReportWriter {
  public static let fileNames = [
    "report.json", "junit.xml", "sarif.json", "summary.md", "index.html",
  ]

  /// Returns the paths written.
  @discardableResult
  public static func write(_ report: RunReport, to directory: String) throws -> [String] {
    let fm = FileManager.default
    try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let contents = [
      JSONReport.render(report), JUnitReport.render(report), SARIFReport.render(report),
      MarkdownSummary.render(report), HTMLReport.render(report),
    ]
    var written: [String] = []
    for (name, text) in zip(fileNames, contents) {
      let path = directory + "/" + name
      // Whole or not at all: a full disk leaves no half report under the final name.
      try AtomicFile.write(text, to: path)
      written.append(path)
    }
    for r in report.results where r.verdict != .pass {
      guard let pcap = r.outcome.capture.pcapPath, fm.fileExists(atPath: pcap) else { continue }
      try fm.createDirectory(atPath: directory + "/pcaps", withIntermediateDirectories: true)
      let target = directory + "/pcaps/\(r.scenario.name).pcap"
      try AtomicFile.copy(from: pcap, to: target)
      written.append(target)
    }
    return written
  }
}
