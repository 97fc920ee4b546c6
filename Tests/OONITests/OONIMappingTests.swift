import FailClosedSupport
import Foundation
import Scenarios
import TestSupport
import Testing

@testable import OONI

/// Each mapping rule: target classes to the private network's nodes (with the proportion kept),
/// failures to censor actions, bootstrap stops to censorship, and what is not censorship.
@Suite("OONI mapping")
struct OONIMappingTests {
  static func target(
    _ proto: String, _ address: String = "1.2.3.4:443", failure: String? = nil,
    connect: TorTarget.Step = .notRecorded, handshake: TorTarget.Step = .notRecorded,
    request: TorTarget.Step = .notRecorded
  ) -> TorTarget {
    TorTarget(
      id: address, address: address, name: nil, protocolName: proto, source: nil,
      failure: failure, notRun: false, connect: connect, handshake: handshake, request: request)
  }

  @Test func proportionsKeepTheNearestShareAndBothOutcomesWhereTheClassAllows() {
    // RU 2023: 1/10 dirauth ORPorts of 3 nodes: 0.3 rounds to 0, raised to 1.
    #expect(TargetClassMapping.reachableNodes(reachable: 1, total: 10, nodes: 3).count == 1)
    // 2/10 DirPorts: 0.6 rounds to 1.
    #expect(TargetClassMapping.reachableNodes(reachable: 2, total: 10, nodes: 3).count == 1)
    // 9/10 (IT 2020 DirPorts): 2.7 rounds to 3, lowered to 2: one failed.
    let nine = TargetClassMapping.reachableNodes(reachable: 9, total: 10, nodes: 3)
    #expect(nine.count == 2)
    #expect(nine.how.contains("lowered to 2"))
    // All reachable and all blocked stay so.
    #expect(TargetClassMapping.reachableNodes(reachable: 10, total: 10, nodes: 3).count == 3)
    #expect(TargetClassMapping.reachableNodes(reachable: 0, total: 10, nodes: 3).count == 0)
    // One node (the bridge): the nearest only: 1/14 -> 0, 13/14 -> 1, 1/2 -> 1.
    #expect(TargetClassMapping.reachableNodes(reachable: 1, total: 14, nodes: 1).count == 0)
    #expect(TargetClassMapping.reachableNodes(reachable: 13, total: 14, nodes: 1).count == 1)
    #expect(TargetClassMapping.reachableNodes(reachable: 1, total: 2, nodes: 1).count == 1)
  }

  @Test func targetClassesMapToThePrivateNetworksNodes() {
    let dirHosts: Set<String> = ["66.111.2.131"]
    func cls(_ t: TorTarget) -> RealTorTargetClass? {
      TargetClassMapping.sandboxClass(t, dirPortHosts: dirHosts)
    }
    #expect(cls(Self.target("or_port_dirauth")) == .dirauthORPorts)
    #expect(cls(Self.target("dir_port")) == .dirauthDirPorts)
    #expect(cls(Self.target("obfs4")) == .bridgeObfs4)
    // Early or_port on a directory authority's address is a dirauth ORPort.
    #expect(cls(Self.target("or_port", "66.111.2.131:9001")) == .dirauthORPorts)
    #expect(cls(Self.target("or_port", "5.6.7.8:9001")) == .relayORPorts)
    #expect(cls(Self.target("meek")) == nil)
    #expect(RealTorTargetClass.dirauthORPorts.nodes.count == 3)
    #expect(RealTorTargetClass.bridgeObfs4.nodes == ["testnet-bridge1-obfs4"])
  }

  @Test func failuresMapToCensorActionsByStep() {
    typealias A = FailureCensorAction
    let timeoutAtConnect = Self.target(
      "or_port_dirauth", failure: "generic_timeout_error",
      connect: .failed("generic_timeout_error"))
    #expect(A.action(for: timeoutAtConnect) == .drop)
    // A DirPort whose connect was not recorded, only its GET timed out: a dropped connect.
    #expect(
      A.action(
        for: Self.target(
          "dir_port", failure: "generic_timeout_error", request: .failed("generic_timeout_error")))
        == .drop)
    let timeoutInTLS = Self.target(
      "or_port_dirauth", failure: "generic_timeout_error", connect: .succeeded,
      handshake: .failed("generic_timeout_error"))
    #expect(A.action(for: timeoutInTLS) == .tlsDropped)
    #expect(
      A.action(
        for: Self.target(
          "obfs4", failure: "connection_refused", connect: .failed("connection_refused"))) == .reset
    )
    #expect(
      A.action(
        for: Self.target(
          "or_port_dirauth", failure: "connection_reset", connect: .succeeded,
          handshake: .failed("connection_reset")))
        == .resetAfterHandshake)
    #expect(
      A.action(
        for: Self.target(
          "dir_port", failure: "Get http://x/: eof_error", connect: .succeeded,
          request: .failed("Get http://x/: eof_error")))
        == .closeAfterConnect)
    #expect(
      A.action(
        for: Self.target(
          "or_port_dirauth", failure: "ssl_failed_handshake", connect: .succeeded,
          handshake: .failed("ssl_failed_handshake")))
        == .tlsDropped)
    #expect(
      A.action(
        for: Self.target("obfs4", failure: "host_unreachable", connect: .failed("host_unreachable"))
      ) == .icmpHostUnreachable)
    #expect(
      A.action(
        for: Self.target(
          "obfs4", failure: "network_unreachable", connect: .failed("network_unreachable")))
        == .icmpNetUnreachable)
    #expect(A.action(for: Self.target("obfs4", failure: "handshake: ntor AUTH mismatch")) == nil)
    // What the sandbox's probe must then see.
    #expect(A.closeAfterConnect.probedFailure == "eof_error")
    #expect(A.resetAfterHandshake.probedFailure == "connection_reset")
    #expect(A.reset.probedFailure == "connection_refused")
  }

  @Test func bootstrapStopsMapToTheCensorshipThatStopsTorThere() throws {
    func plan(_ p: Int, _ tag: String, _ transport: String = "vanilla") throws
      -> BootstrapStopCensorship.Plan
    {
      try BootstrapStopCensorship.plan(
        stop: BootstrapStop(progress: p, tag: tag, summary: nil, source: .fields),
        transport: transport, measured: "XX")
    }
    func actions(_ p: BootstrapStopCensorship.Plan) -> [String] {
      p.rules.map { rule in
        rule.filter { $0.key != "measured" }.map { "\($0.key)=\($0.value.serialized())" }
          .joined(separator: " ")
      }
    }
    let conn = try plan(5, "conn_dir")
    #expect(conn.phase == "conn" && conn.progress == 5)
    #expect(
      actions(conn) == [
        #"action="drop" to="tor-relays" protocol="tcp""#,
        #"action="drop" to="tor-bridge" protocol="tcp""#,
      ])
    let tls = try plan(10, "conn_done")
    #expect(actions(tls) == [#"action="drop" to="tor-relays" protocol="tcp" longerThan=100"#])
    let done = try plan(100, "done")
    #expect(done.rules.isEmpty && done.phase == "done")
    let snowflake = try plan(100, "done", "snowflake")
    #expect(snowflake.bridges == ["testnet-obfs4"])
    #expect(actions(snowflake) == [#"action="drop" to="tor-relays" protocol="tcp""#])
    #expect(
      snowflake.notes.contains { $0.contains("approximated by the private network's obfs4 bridge") }
    )
    #expect(throws: OONIConversionError.self) { try plan(50, "loading_descriptors") }
    #expect(throws: OONIConversionError.self) { try plan(5, "conn", "snowflake") }
    let snowflakeStuck = try plan(2, "conn_done_pt", "snowflake")
    #expect(
      actions(snowflakeStuck) == [
        #"action="drop" to="tor-relays" protocol="tcp""#,
        #"action="drop" to="tor-bridge" protocol="tcp""#,
      ])
  }

  @Test(
    .needs("needs the OONI corpus", if: corpusMissing == nil))
  func notCensorshipIsRefusedWithItsReasonAndForcedWithItInTheFile() throws {
    try #require(corpusMissing == nil, "needs the OONI corpus")
    let refused: [(String, String)] = [
      ("US_tor_2022-11-10_AS7018_ntor-auth-mismatch.json", "ntor AUTH mismatch"),
      ("MY_vanilla_tor_2019-04-08_AS4788_legacy_probe-bug.json", "ran 3 ms"),
      ("IT_torsf_2021-07-14_AS30722_timeout.json", "never submitted"),
      ("IT_tor_2020-01-10_AS30722_early-list-format.json", "accuracy 0"),
      ("EXAMPLE_IT_tor_2020-01-12_AS30722_list-format.json", "accuracy 0"),
    ]
    for (file, reason) in refused {
      let m = try parseCorpus(file)
      do {
        _ = try OONIConversion.convert(m)
        Issue.record("\(file) converted without --force")
      } catch {
        guard case .notCensorship(let reasons) = error else {
          Issue.record("\(file): \(error)")
          continue
        }
        #expect(reasons.joined().contains(reason), "\(file): \(reasons)")
      }
      let forced = try OONIConversion.convert(m, options: .init(force: true))
      let text = OONIConversion.text(forced)
      #expect(text.contains("\"notCensorship\"") && text.contains(reason), "\(file)")
      let scenario = try ScenarioParser.parse(text, file: file)
      #expect(scenario.ooni?.notCensorship.isEmpty == false)
    }
    // Not a Tor test at all.
    #expect(throws: OONIConversionError.self) {
      try OONIConversion.convert(
        try parseCorpus("EXAMPLE_IT_stun_reachability_2020-06-01_AS30722.json"))
    }
  }

  @Test(
    .needs("needs the OONI corpus", if: corpusMissing == nil))
  func theRUMeasurementBecomesAScenarioClassByClass() throws {
    try #require(corpusMissing == nil, "needs the OONI corpus")
    let m = try parseCorpus("RU_tor_2023-01-21_AS197467_blocked.json")
    let text = OONIConversion.text(try OONIConversion.convert(m))
    let scenario = try ScenarioParser.parse(text, file: "ru.json")
    #expect(scenario.lane == .realTor)
    let rules = scenario.network.censor
    #expect(
      rules.map(\.target) == [
        "testnet-auth2-orport", "testnet-auth3-orport", "testnet-auth2-dirport",
        "testnet-auth3-dirport", "testnet-bridge1-obfs4",
      ])
    #expect(rules.allSatisfy { $0.action == .drop })
    #expect(
      rules[0].measured == "RU 2023-01-21 AS197467, 9/10 or_port_dirauth generic_timeout_error")
    #expect(rules[4].measured == "RU 2023-01-21 AS197467, 13/14 obfs4 generic_timeout_error")
    let reach = scenario.expectations.compactMap { e -> String? in
      guard let p = e.as(ScenarioExpectation.Reachability.self) else { return nil }
      return "\(p.targets.rawValue) \(p.reachable) \(p.failure ?? "-")"
    }
    #expect(
      reach == [
        "dirauth-orports 1 generic_timeout_error", "dirauth-dirports 1 generic_timeout_error",
        "bridge-obfs4 0 generic_timeout_error",
      ])
    #expect(scenario.ooni?.notes.contains { $0.contains("IPv6") && $0.contains("local") } == true)
    #expect(
      scenario.ooni?.notes.contains {
        $0.hasPrefix("relay-orports") && $0.contains("left reachable")
      } == true)
  }

  /// Every convertible file converts to a scenario the parser accepts, with the stop it measured.
  @Test(
    .needs("needs the OONI corpus", if: corpusMissing == nil))
  func everyCensorshipCaseAndControlConvertsToAValidScenario() throws {
    try #require(corpusMissing == nil, "needs the OONI corpus")
    let stops: [(String, String)] = [
      ("CN_vanilla_tor_2017-10-07_AS56040_legacy_stuck5pct.json", "5 conn"),
      ("BR_vanilla_tor_2023-08-18_AS8167_ok.json", "100 done"),
      ("IE_vanilla_tor_2020-08-13_AS6830_legacy_ok.json", "100 done"),
      ("EXAMPLE_IT_vanilla_tor_2022-05-10_AS30722.json", "100 done"),
      ("IT_torsf_2021-07-27_AS30722_ok.json", "100 done"),
      ("EXAMPLE_IT_torsf_2021-06-18_AS30722.json", "100 done"),
      ("EXAMPLE_IT_torsf_2022-02-07_AS30722.json", "100 done"),
      ("EXAMPLE_IT_torsf_2022-05-10_AS30722.json", "100 done"),
    ]
    for (file, stop) in stops {
      let m = try parseCorpus(file)
      let scenario = try ScenarioParser.parse(
        OONIConversion.text(try OONIConversion.convert(m)), file: file)
      let found = scenario.expectations.compactMap { e -> String? in
        guard let stop = e.as(ScenarioExpectation.BootstrapStopsAt.self) else { return nil }
        return "\(stop.progress) \(stop.tag)"
      }
      #expect(found == [stop], "\(file)")
      if m.testName == "torsf" {
        #expect(scenario.app.profile == .hardened)
        #expect(scenario.tor.real?.bridges == [.testnetObfs4])
      }
    }
    // The IT 2020 DirPort eof_error becomes a close after connect on one of three DirPorts.
    let it = try parseCorpus("EXAMPLE_IT_tor_2020-01-30_AS30722.json")
    let scenario = try ScenarioParser.parse(
      OONIConversion.text(try OONIConversion.convert(it)), file: "it.json")
    #expect(scenario.network.censor.map(\.action) == [.closeAfterConnect])
    #expect(scenario.network.censor.map(\.target) == ["testnet-auth3-dirport"])
    // The profile can be chosen.
    let cn = try parseCorpus("CN_vanilla_tor_2017-10-07_AS56040_legacy_stuck5pct.json")
    let ob = try ScenarioParser.parse(
      OONIConversion.text(try OONIConversion.convert(cn, options: .init(profile: .onionBrowser))),
      file: "cn.json")
    #expect(ob.app.profile == .onionBrowser)
  }
}

/// Scenarios/ooni/ is what `failclosed ooni convert` writes today from the corpus: a change to
/// the mapping shows up here until the files are converted again.
@Suite struct OONILibraryTests {
  static let library = repositoryRoot + "/Scenarios/ooni"

  @Test(
    .needs("needs the OONI corpus", if: corpusMissing == nil))
  func theLibraryFilesAreTheConverterOutput() throws {
    try #require(corpusMissing == nil, "needs the OONI corpus")
    let files = try ScenarioLoader.scenarioFiles(in: Self.library)
    #expect(files.count >= 6)
    for file in files {
      let text = try String(contentsOfFile: file, encoding: .utf8)
      let scenario = try ScenarioParser.parse(text, file: file)
      let source = try #require(scenario.ooni?.source, "\(file) has no ooni.source")
      let m = try parseCorpus(source)
      #expect(OONIConversion.text(try OONIConversion.convert(m)) == text, "\(file)")
    }
  }
}

/// New measurements in the same formats (a made-up country, date and probe; JSONL) convert
/// without code changes, through mappings the real corpus does not exercise.
@Suite struct OONINewMeasurementTests {
  @Test func aJSONLOfNewMeasurementsConverts() throws {
    let file =
      URL(fileURLWithPath: #filePath).deletingLastPathComponent().path
      + "/synthetic/ZZ_new_measurements.jsonl"
    let data = try #require(FileManager.default.contents(atPath: file))
    let measurements = try OONIParser.parse(Array(data), file: "ZZ_new_measurements.jsonl")
    #expect(measurements.map(\.line) == [1, 2, 3])
    let stuck = try ScenarioParser.parse(
      OONIConversion.text(try OONIConversion.convert(measurements[0])), file: "zz1.json")
    #expect(
      stuck.expectations.contains(
        .bootstrapStopsAt(progress: 10, tag: "conn_done", measured: "10% conn_done, tor 0.4.8.10")))
    #expect(stuck.network.censor.map(\.longerThan) == [100])
    let tor = try ScenarioParser.parse(
      OONIConversion.text(try OONIConversion.convert(measurements[1])), file: "zz2.json")
    #expect(
      tor.network.censor.map(\.action) == [.resetAfterHandshake, .resetAfterHandshake, .reset])
    #expect(
      tor.network.censor.map(\.target) == [
        "testnet-auth2-orport", "testnet-auth3-orport", "testnet-auth3-dirport",
      ])
    #expect(
      tor.network.censor[0].measured
        == "ZZ 2025-03-02 AS64501, 8/10 or_port_dirauth connection_reset")
    #expect(
      tor.expectations.contains(
        .reachability(
          targets: .dirauthDirPorts, reachable: 2, failure: "connection_refused",
          measured: "ZZ 2025-03-02 AS64501, 5/10 dir_port reachable")))
    let snowflake = try ScenarioParser.parse(
      OONIConversion.text(try OONIConversion.convert(measurements[2])), file: "zz3.json")
    #expect(snowflake.app.profile == .hardened)
    #expect(snowflake.network.censor.map(\.target) == ["tor-relays", "tor-bridge"])
    #expect(
      snowflake.expectations.contains(
        .bootstrapStopsAt(
          progress: 2, tag: "conn_done_pt", measured: "2% conn_done_pt, tor 0.4.8.10")))
  }
}
