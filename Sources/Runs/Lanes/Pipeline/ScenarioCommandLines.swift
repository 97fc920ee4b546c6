import FailClosedSupport
import Foundation
import Sandbox
import Scenarios
import SystemUnderTest

/// The command lines the runner starts in the device for a scenario: the mock Tor and the app
/// driver. Pure, so the mapping from a scenario file to processes is tested without a sandbox.
public enum ScenarioCommandLines {
  /// The device's Tor ports, as bitchat and Onion Browser configure them.
  public static let socksPort = 39050
  public static let controlPort = 39051

  /// `failclosed mock-tor ...`, tunnelling to the sandbox's guard. The ctor personality also
  /// serves its control port, which the app's control-port backend drives. The run's epoch
  /// comes by hand-over (LanePipeline adds `--epoch stdin`).
  public static func mockTor(
    _ plan: TorPlan, executable: String, timeScale: Double, guards: [String],
    eventLog: String
  ) -> [String] {
    var arguments = [
      executable, "mock-tor", "--personality", plan.personality.rawValue,
      "--listen", "127.0.0.1:\(socksPort)", "--bootstrap-plan", plan.bootstrap,
      "--time-scale", format(timeScale), "--event-log", eventLog,
    ]
    // Like the tor an app starts itself (the real lane's too): network off until the app's
    // controller turns it on, so the plan's times count from the app's start.
    if plan.personality == .ctor {
      arguments += ["--control-port", String(controlPort), "--control-disable-network"]
    }
    for address in guards { arguments += ["--guard", address] }
    return arguments + faultArguments(plan.faults)
  }

  /// One `--fault HOST=SPEC` per host, its faults' toxics joined: the mock keys faults by
  /// host and a second `--fault` for a host would replace the first.
  static func faultArguments(_ faults: [StreamFault]) -> [String] {
    var hosts: [String] = []
    var specs: [String: [String]] = [:]
    for fault in faults {
      let host = host(of: fault.destination)
      if specs[host] == nil { hosts.append(host) }
      specs[host, default: []].append(fault.mockSpec)
    }
    return hosts.flatMap { ["--fault", $0 + "=" + specs[$0]!.joined(separator: ",")] }
  }

  /// `failclosed app ...` with the scenario's profile, reading `actionsFile`. Mock lane: the
  /// arti backend at the mock's SOCKS port, or for the ctor personality the control-port
  /// backend at the mock's control port. Real-Tor lane: the app starts Debian's tor itself
  /// from `torrcBase` and drives it (backend `tor`), in real time.
  public static func app(
    _ scenario: Scenario, executable: String, timeScale: Double, actionsFile: String,
    stateDirectory: String, trustAnchors: String, torrcBase: String? = nil
  ) -> [String] {
    var backend: [String]
    switch scenario.tor {
    case .mock(let plan) where plan.personality == .ctor:
      backend = ["--backend", "ctor", "--control", "127.0.0.1:\(controlPort)"]
    case .mock:
      backend = ["--backend", "arti"]
    case .realTor:
      backend = ["--backend", "tor", "--torrc-base", torrcBase ?? "torrc-base"]
    }
    return [executable, "app"] + backend + [
      "--profile", scenario.app.profile.rawValue, "--actions", actionsFile, "--time-scale",
      format(scenario.lane == .realTor ? 1 : timeScale), "--state-dir", stateDirectory,
      "--socks", "127.0.0.1:\(socksPort)", "--ca", trustAnchors,
    ]
  }

  /// The app driver's actions file (JSON lines). The starting state comes first, at time 0:
  /// relays the user had added, and a revoked activation. Tor crashes are the runner's (it
  /// kills the mock), not the app's, and are left out.
  public static func actionsFile(_ scenario: Scenario) -> String {
    driverActions(scenario).map(\.jsonLine).joined(separator: "\n") + "\n"
  }

  /// The scenario's steps as the driver's actions (SystemUnderTest.AppAction, whose encoder
  /// writes the file), ending with a wait at the scenario's duration.
  public static func driverActions(_ scenario: Scenario) -> [SystemUnderTest.AppAction] {
    typealias Driver = SystemUnderTest.AppAction
    var actions: [Driver] = []
    if !scenario.app.activationGranted { actions.append(Driver(at: 0, .revokeActivation)) }
    for relay in scenario.app.customRelays { actions.append(Driver(at: 0, .addRelay(url: relay))) }
    for action in scenario.app.actions {
      if let kind = action.step.driverKind { actions.append(Driver(at: action.at, kind)) }
    }
    actions.append(Driver(at: scenario.duration, .wait(seconds: 0)))
    return actions
  }

  /// The preferences the app starts with (its UserDefaults), as JSON. On the real-Tor lane the
  /// scenario's bridges go in as `tor.bridges` (bridge lines, `bridgeLines` resolving each name
  /// to the network's line); whether the app uses them is its profile's business.
  public static func preferences(
    _ scenario: Scenario, bridgeLines: [RealTorPlan.Bridge: String] = [:]
  ) -> String {
    var members = [
      #""networkActivationService.userTorEnabled": \#(scenario.app.torPreference)"#
    ]
    if let real = scenario.tor.real, !real.bridges.isEmpty {
      let lines = real.bridges.map { JSONText.quote(bridgeLines[$0] ?? $0.rawValue) }
      members.append(#""tor.bridges": [\#(lines.joined(separator: ", "))]"#)
    }
    return "{" + members.joined(separator: ", ") + "}"
  }

  /// The relay directory the app cached on an earlier run (bitchat's georelays_cache_v2.csv):
  /// 60 relays, so the app starts from its cache as a real install does.
  public static func directoryCache() -> String { WorldRelayDirectory.csv }

  /// Virtual times at which the runner kills the mock Tor.
  public static func crashTimes(_ scenario: Scenario) -> [Double] {
    var times = scenario.app.actions.filter { $0.step == .torCrash }.map(\.at)
    if let crash = scenario.tor.mock?.crashAt { times.append(crash) }
    return times.sorted()
  }

  static func host(of destination: String) -> String {
    if destination.hasPrefix("["), let close = destination.firstIndex(of: "]") {
      return String(destination[destination.index(after: destination.startIndex)..<close])
    }
    if let colon = destination.lastIndex(of: ":"), destination.firstIndex(of: ":") == colon {
      return String(destination[..<colon])
    }
    return destination
  }

  static func format(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }
}
