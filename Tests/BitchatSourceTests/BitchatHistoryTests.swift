import Foundation
import Testing

@testable import BitchatSource

/// A git repository of bitchat-shaped commits, made by the test: the Arti switch, a commit
/// touching only the app's UI, two touching the Tor layer.
private func history() throws -> (root: String, hashes: [String]) {
  let root = try temporaryDirectory("history")
  func git(_ arguments: String...) throws -> String {
    try BitchatSourceTests.git(in: root, arguments)
  }
  func write(_ path: String, _ text: String) throws {
    let full = root + "/" + path
    try FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try text.write(toFile: full, atomically: true, encoding: .utf8)
  }
  _ = try git("init", "-q")
  try write("bitchat/Views/Before.swift", "struct Before {}")
  _ = try git("add", "-A")
  _ = try git("commit", "-q", "-m", "before Arti")
  var hashes: [String] = []
  for (number, path) in [
    "localPackages/Arti/Sources/TorManager.swift", "bitchat/Views/ContentView.swift",
    "bitchat/Services/NetworkActivationService.swift", "bitchat/Nostr/NostrRelayManager.swift",
  ].enumerated() {
    try write(path, "// \(number)\n")
    try write("relays/online_relays_gps.csv", "host,lat,lon\n")
    try write("docs/image.png", "not a source")
    _ = try git("add", "-A")
    _ = try git("commit", "-q", "-m", "commit \(number)")
    hashes.append(try git("rev-parse", "HEAD"))
  }
  return (root, hashes)
}

@Suite struct BitchatHistoryTests {
  /// From the switch to Arti (the commit adding TorManager.swift), only commits that touch the
  /// Tor layer, oldest first; --max spreads over them, first and last kept.
  @Test func commitsTouchingTheTorLayerSinceTheSwitch() throws {
    let (root, hashes) = try history()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let repository = try BitchatHistory(repository: root)
    #expect(
      try repository.commits(since: nil, max: nil).map(\.hash) == [hashes[0], hashes[2], hashes[3]])
    #expect(
      try repository.commits(since: hashes[2], max: nil).map(\.hash) == [hashes[2], hashes[3]])
    #expect(try repository.commits(since: nil, max: 2).map(\.hash) == [hashes[0], hashes[3]])
    #expect(try repository.commits(since: nil, max: 1).map(\.hash) == [hashes[3]])
    #expect(try repository.commit(String(hashes[1].prefix(10))).subject == "commit 1")
  }

  /// An export holds the sources and the relay list, not other files, and is made once.
  @Test func anExportKeepsSourcesOnly() throws {
    let (root, hashes) = try history()
    defer { try? FileManager.default.removeItem(atPath: root) }
    let repository = try BitchatHistory(repository: root)
    let commit = try repository.commit(hashes[3])
    let exported = try repository.export(commit, under: root + "/exports")
    #expect(
      FileManager.default.fileExists(atPath: exported + "/bitchat/Nostr/NostrRelayManager.swift"))
    #expect(FileManager.default.fileExists(atPath: exported + "/relays/online_relays_gps.csv"))
    #expect(!FileManager.default.fileExists(atPath: exported + "/docs/image.png"))
    #expect(try repository.export(commit, under: root + "/exports") == exported)
  }

  /// Bad input names the place at fault.
  @Test func aMissingRepositoryOrCommitIsNamed() throws {
    #expect(throws: BitchatSourceError.noRepository("/nonexistent/bitchat", "no such directory")) {
      try BitchatHistory(repository: "/nonexistent/bitchat")
    }
    let (root, _) = try history()
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(throws: BitchatSourceError.noRepository(root, "no commit 'deadbeef'")) {
      try BitchatHistory(repository: root).commits(since: "deadbeef", max: nil)
    }
  }
}

@Suite struct BitchatSweepTableTests {
  static func row(
    _ hash: String, build: String = "ok", tests: (Int, Int)? = (10, 0), _ verdicts: [String: String]
  )
    -> BitchatSweepTable.Row
  {
    var row = BitchatSweepTable.Row(
      commit: .init(hash: hash, date: "2026-07-0\(hash.count % 9)T00:00:00Z", subject: "s \(hash)"))
    row.build = build
    row.testsPassed = tests?.0
    row.testsFailed = tests?.1
    row.verdicts = verdicts
    return row
  }

  /// A regression shows as the first commit where a verdict changed; a column that does not
  /// change shows nothing.
  @Test func theFirstCommitWhereAVerdictChangedIsNamed() {
    let table = BitchatSweepTable(
      repository: "r", scenarios: ["stall", "healthy"],
      rows: [
        Self.row("aaaa1111", ["stall": "fail", "healthy": "pass"]),
        Self.row("bbbb2222", ["stall": "pass", "healthy": "pass"]),
        Self.row("cccc3333", tests: (9, 1), ["stall": "pass", "healthy": "pass"]),
        Self.row("dddd4444", build: "failed", tests: nil, [:]),
      ])
    #expect(
      table.changes == [
        .init(column: "stall", commit: "bbbb2222", before: "fail", after: "pass"),
        .init(column: "own tests", commit: "cccc3333", before: "10/0", after: "9/1"),
        .init(column: "build", commit: "dddd4444", before: "ok", after: "failed"),
      ])
    #expect(table.markdown.contains("| bbbb2222 | 2026-07-08 | ok | 10/0 | pass | pass |"))
    #expect(table.markdown.contains("- stall: fail -> pass at bbbb2222 (s bbbb2222)"))
  }

  /// Against the pinned list: every differing cell is named; the same table has none.
  @Test func differencesFromTheExpectedTableAreNamed() throws {
    let expected = BitchatSweepTable(
      repository: "r", scenarios: ["stall"],
      rows: [Self.row("aaaa1111", ["stall": "fail"]), Self.row("bbbb2222", ["stall": "pass"])])
    var got = expected
    got.rows[1].verdicts["stall"] = "leak"
    got.rows[0].testsFailed = 2
    #expect(
      got.differences(from: expected) == [
        "aaaa1111 own tests: expected 10/0, got 10/2", "bbbb2222 stall: expected pass, got leak",
      ])
    #expect(expected.differences(from: expected).isEmpty)
    let path = try temporaryDirectory("table") + "/sweep.json"
    try expected.json().write(to: URL(fileURLWithPath: path))
    #expect(try BitchatSweepTable.read(path) == expected)
    try "{".write(toFile: path, atomically: true, encoding: .utf8)
    #expect(throws: BitchatSourceError.self) { try BitchatSweepTable.read(path) }
  }
}

/// The project's pinned history (baselines/bitchat-history.json): the commits it measured, by
/// hash, with their results; what `bitchat-source --sweep REPO --expect` holds a clone to.
@Suite struct BitchatHistoryBaselineTests {
  @Test func thePinnedHistoryCoversTwentyCommitsAcrossTheMonthsAndBuildsThem() throws {
    let table = try BitchatSweepTable.read(
      BitchatSourceLocation.packageRoot + "/baselines/bitchat-history.json")
    #expect(table.rows.count >= 20)
    #expect(table.rows.allSatisfy { $0.commit.count == 40 })
    #expect(Set(table.rows.map(\.commit)).count == table.rows.count)
    let months = Set(table.rows.map { $0.date.prefix(7) })
    #expect(months.count >= 6, "\(months.sorted())")
    // A build failure counts only with a diagnostic, and stays under 10%.
    let failed = table.rows.filter { $0.build != "ok" }
    #expect(failed.allSatisfy { !($0.diagnostic ?? "").isEmpty })
    #expect(failed.count * 10 < table.rows.count)
    // Every row ran to a verdict in every scenario, each one not a pass with its reason.
    for row in table.rows where row.build == "ok" {
      for scenario in table.scenarios {
        let verdict = try #require(row.verdicts[scenario], "\(row.commit.prefix(8)) \(scenario)")
        if verdict != "pass" {
          #expect(row.reasons?[scenario] != nil, "\(row.commit.prefix(8)) \(scenario) \(verdict)")
        }
      }
    }
  }
}
