import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import OONI

/// The corpus of real measurements, byte for byte (Tests/OONITests/corpus, sources in its
/// README; FC_OONI_CORPUS points elsewhere); the tests need it and fail under CI=1 without it.
let corpus: String =
  ProcessInfo.processInfo.environment["FC_OONI_CORPUS"]
  ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().path + "/corpus"
let corpusMissing: String? =
  FileManager.default.fileExists(atPath: corpus) ? nil : "no OONI corpus at \(corpus)"

func parseCorpus(_ name: String) throws -> OONIMeasurement {
  let data = try #require(FileManager.default.contents(atPath: corpus + "/" + name))
  let parsed = try OONIParser.parse(Array(data), file: name)
  try #require(parsed.count == 1)
  return parsed[0]
}

@Suite("OONI parser")
struct OONIParserTests {
  @Test func theCorpusIsHereUnderCI() {
    if ProcessInfo.processInfo.environment["CI"] == "1" { #expect(corpusMissing == nil) }
  }

  /// Every `tor` file: (test_version, shape, per protocol reachable/total).
  static let torFiles: [(String, String, TorTestKeys.Shape, [String: [Int]])] = [
    (
      "EXAMPLE_IT_tor_2020-01-12_AS30722_list-format.json", "0.0.1", .list,
      ["obfs4": [1, 1], "or_port": [1, 1], "dir_port": [1, 1]]
    ),
    ("EXAMPLE_IT_tor_2020-01-16_AS30722_1441.json", "0.0.1", .map, ["obfs4": [1, 1]]),
    (
      "EXAMPLE_IT_tor_2020-01-27_AS30722_1341_full-body.json", "0.1.0", .map,
      ["obfs4": [14, 14], "or_port": [10, 10], "dir_port": [9, 10]]
    ),
    (
      "EXAMPLE_IT_tor_2020-01-27_AS30722_2000.json", "0.1.0", .map,
      ["obfs4": [14, 14], "or_port_dirauth": [10, 10], "dir_port": [9, 10]]
    ),
    (
      "EXAMPLE_IT_tor_2020-01-30_AS30722.json", "0.1.0", .map,
      ["obfs4": [14, 14], "or_port_dirauth": [10, 10], "dir_port": [9, 10]]
    ),
    (
      "IT_tor_2020-01-10_AS30722_early-list-format.json", "0.0.1", .list,
      ["obfs4": [1, 1], "or_port": [1, 1], "dir_port": [1, 1]]
    ),
    (
      "IT_tor_2020-01-16_AS30722_early-map-format.json", "0.0.1", .map,
      ["obfs4": [1, 1], "or_port": [1, 1], "dir_port": [1, 1]]
    ),
    (
      "RU_tor_2023-01-21_AS197467_blocked.json", "0.4.0", .map,
      ["obfs4": [1, 15], "or_port_dirauth": [1, 10], "dir_port": [2, 10]]
    ),
    (
      "US_tor_2022-11-10_AS7018_ntor-auth-mismatch.json", "0.3.0", .map,
      ["obfs4": [2, 15], "or_port_dirauth": [10, 10], "dir_port": [10, 10]]
    ),
  ]

  @Test(
    .needs("needs the OONI corpus", if: corpusMissing == nil),
    arguments: torFiles)
  func torFilesParseWithTheirClassCounts(
    file: String, version: String, shape: TorTestKeys.Shape, counts: [String: [Int]]
  ) throws {
    let m = try parseCorpus(file)
    #expect(m.testName == "tor")
    #expect(m.testVersion == version)
    guard case .tor(let keys) = m.keys else {
      Issue.record("\(file): not parsed as tor")
      return
    }
    #expect(keys.shape == shape)
    var seen: [String: [Int]] = [:]
    for t in keys.targets {
      seen[t.protocolName, default: [0, 0]][1] += 1
      if t.failure == nil { seen[t.protocolName]![0] += 1 }
    }
    #expect(seen == counts, "\(file)")
    // Where the probe wrote totals, they agree with the targets.
    for (proto, totals) in keys.totals where totals.total > 0 {
      #expect(counts[proto] == [totals.accessible, totals.total], "\(file) \(proto)")
    }
  }

  /// Every vanilla_tor/torsf file: (test_version, legacy log, stop as "P% tag", today's tag).
  static let bootstrapFiles: [(String, String, Bool, String?, String?)] = [
    ("BR_vanilla_tor_2023-08-18_AS8167_ok.json", "0.2.0", false, "100% done", "done"),
    (
      "CN_vanilla_tor_2017-10-07_AS56040_legacy_stuck5pct.json", "0.1.0", true, "5% conn_dir",
      "conn"
    ),
    ("EXAMPLE_IT_vanilla_tor_2022-05-10_AS30722.json", "0.2.0", false, "100% done", "done"),
    ("IE_vanilla_tor_2020-08-13_AS6830_legacy_ok.json", "0.1.0", true, "100% done", "done"),
    ("MY_vanilla_tor_2019-04-08_AS4788_legacy_probe-bug.json", "0.1.0", true, nil, nil),
    ("EXAMPLE_IT_torsf_2021-06-18_AS30722.json", "0.1.0", false, "100% done", "done"),
    ("EXAMPLE_IT_torsf_2022-02-07_AS30722.json", "0.2.0", false, "100% done", "done"),
    ("EXAMPLE_IT_torsf_2022-05-10_AS30722.json", "0.3.0", false, "100% done", "done"),
    ("IT_torsf_2021-07-14_AS30722_timeout.json", "0.1.0", false, nil, nil),
    ("IT_torsf_2021-07-27_AS30722_ok.json", "0.1.0", false, "100% done", "done"),
  ]

  @Test(
    .needs("needs the OONI corpus", if: corpusMissing == nil),
    arguments: bootstrapFiles)
  func bootstrapFilesParseWithTheirStop(
    file: String, version: String, legacy: Bool, stop: String?, modern: String?
  ) throws {
    let m = try parseCorpus(file)
    #expect(m.testVersion == version)
    guard case .bootstrap(let keys) = m.keys else {
      Issue.record("\(file): not parsed as a bootstrap test")
      return
    }
    #expect(keys.legacyLog == legacy)
    #expect(keys.stop?.description == stop, "\(file)")
    #expect(keys.stop?.phase?.tag == modern, "\(file)")
    #expect(keys.transport == (m.testName == "torsf" ? "snowflake" : "vanilla"))
  }

  @Test(
    .needs("needs the OONI corpus", if: corpusMissing == nil))
  func everyCorpusFileParses() throws {
    let files = try FileManager.default.contentsOfDirectory(atPath: corpus).filter {
      $0.hasSuffix(".json")
    }
    #expect(files.count == Self.torFiles.count + Self.bootstrapFiles.count + 1)
    for file in files {
      let m = try parseCorpus(file)
      #expect(!m.probeCC.isEmpty && m.probeASN.hasPrefix("AS"), "\(file)")
    }
    let stun = try parseCorpus("EXAMPLE_IT_stun_reachability_2020-06-01_AS30722.json")
    #expect(stun.keys == .other)
  }

  @Test(
    .needs("needs the OONI corpus", if: corpusMissing == nil))
  func theRUTargetsKeepEachStep() throws {
    let m = try parseCorpus("RU_tor_2023-01-21_AS197467_blocked.json")
    guard case .tor(let keys) = m.keys else { return }
    let moria = try #require(keys.targets.first { $0.id == "128.31.0.39:9101" })
    #expect(moria.name == "moria1")
    #expect(moria.connect == .failed("generic_timeout_error"))
    // A DirPort whose connect measurex did not record: only the request failed.
    let dir = try #require(keys.targets.first { $0.id == "128.31.0.39:9131" })
    #expect(dir.connect == .notRecorded)
    #expect(dir.request == .failed("generic_timeout_error"))
    let ipv6 = try #require(keys.targets.first { $0.isIPv6 })
    #expect(ipv6.failure == "network_unreachable")
    #expect(m.label == "RU 2023-01-21 AS197467")
  }

  @Test func jsonlReadsOneMeasurementPerLineAndNamesTheBadLine() throws {
    let one =
      #"{"test_name":"vanilla_tor","test_version":"0.2.0","probe_cc":"XX","probe_asn":"AS1","#
      + #""measurement_start_time":"2024-01-02 03:04:05","test_keys":{"tor_progress":5,"#
      + #""tor_progress_tag":"conn","tor_logs":[],"success":false,"failure":"generic_timeout_error"}}"#
    let two = one.replacingOccurrences(of: "AS1", with: "AS2")
    let parsed = try OONIParser.parse(Array((one + "\n\n" + two + "\n").utf8), file: "m.jsonl")
    #expect(parsed.map(\.probeASN) == ["AS1", "AS2"])
    #expect(parsed.map(\.line) == [1, 3])
    do {
      _ = try OONIParser.parse(
        Array((one + "\n" + "{\"test_name\": }" + "\n").utf8), file: "m.jsonl")
      Issue.record("a malformed second line parsed")
    } catch {
      #expect(error.file == "m.jsonl" && error.line == 2)
      #expect(error.description.hasPrefix("m.jsonl:2: not valid JSON"))
    }
    let badField = two.replacingOccurrences(of: #""tor_progress":5"#, with: #""tor_progress":"5""#)
    do {
      _ = try OONIParser.parse(Array((one + "\n" + badField).utf8), file: "m.jsonl")
      Issue.record("a string tor_progress parsed")
    } catch {
      #expect(error.line == 2 && error.field == "test_keys.tor_progress")
      #expect(
        error.description.contains("m.jsonl:2: field 'test_keys.tor_progress': expected a number"))
    }
  }

  @Test func malformedDocumentsNameTheFileLineAndField() {
    func failure(_ text: String) -> OONIError? {
      do {
        _ = try OONIParser.parse(Array(text.utf8), file: "f.json")
        return nil
      } catch { return error }
    }
    #expect(failure("")?.message.contains("empty") == true)
    #expect(failure("{\n  \"test_name\": \"tor\",\n  oops\n}")?.line == 3)
    let noKeys = failure(
      #"{"test_name":"tor","test_version":"0.4.0","probe_cc":"RU","probe_asn":"AS1","#
        + #""measurement_start_time":"2023-01-21 23:58:05"}"#)
    #expect(noKeys?.description == "f.json:1: missing \"test_keys\"")
    let badTime = failure(
      #"{"test_name":"tor","test_version":"0.4.0","probe_cc":"RU","probe_asn":"AS1","#
        + #""measurement_start_time":"yesterday","test_keys":{"targets":{}}}"#)
    #expect(badTime?.field == "measurement_start_time")
    let badTarget = failure(
      #"{"test_name":"tor","test_version":"0.4.0","probe_cc":"RU","probe_asn":"AS1","#
        + #""measurement_start_time":"2023-01-21 23:58:05","test_keys":{"targets":{"a:1":"#
        + #"{"target_address":"a:1","target_protocol":"obfs4","failure":7}}}}"#)
    #expect(badTarget?.field == "test_keys.targets.a:1.failure")
  }

  @Test func failureStringsReadAsTheirKind() {
    #expect(OONIFailure("generic_timeout_error") == .timeout)
    #expect(
      OONIFailure("Get http://128.31.0.39:9131/tor/status-vote/current/consensus.z: eof_error")
        == .eof)
    #expect(OONIFailure("connection_refused") == .connectionRefused)
    #expect(OONIFailure("connection_reset") == .connectionReset)
    #expect(
      OONIFailure("unknown_failure: dial tcp [scrubbed]: connect: no route to host")
        == .hostUnreachable)
    #expect(OONIFailure("network_unreachable") == .networkUnreachable)
    #expect(OONIFailure("ssl_invalid_hostname") == .tls("ssl_invalid_hostname"))
    #expect(
      OONIFailure("handshake: ntor AUTH mismatch: Derived: x Received: y") == .ntorAuthMismatch)
    #expect(OONIFailure("tcp_timed_out_error") == .timeout)
    #expect(OONIFailure("something_new") == .other("something_new"))
  }

  @Test func legacyStopsMapToTodaysPhases() {
    let cases: [(Int, String?, String?, String?)] = [
      (5, "conn_dir", nil, "conn"), (10, "handshake_dir", nil, "conn_done"),
      (15, "onehop_create", nil, "onehop_create"),
      (80, nil, "Connecting to the Tor network", "ap_conn"),
      (5, "conn", nil, "conn"), (61, "loading_descriptors", nil, "loading_descriptors"),
      (100, "done", nil, "done"), (42, "bogus", nil, nil),
    ]
    for (progress, tag, summary, modern) in cases {
      let stop = BootstrapStop(progress: progress, tag: tag, summary: summary, source: .fields)
      #expect(stop.phase?.tag == modern, "\(progress) \(tag ?? summary ?? "")")
    }
    #expect(
      BootstrapStop.parseLogLine(
        "Aug 18 06:52:08.000 [notice] Bootstrapped 5% (conn): Connecting to a relay")! == (
          5, "conn", "Connecting to a relay"
        ))
    #expect(
      BootstrapStop.parseLogLine(
        "Oct 07 07:33:23.000 [notice] Bootstrapped 5%: Connecting to directory server")! == (
          5, nil, "Connecting to directory server"
        ))
    #expect(BootstrapStop.parseLogLine("[notice] Opening Socks listener") == nil)
  }
}
