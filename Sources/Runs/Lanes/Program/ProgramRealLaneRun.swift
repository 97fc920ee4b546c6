import FailClosedSupport
import Foundation
import Scenarios
import Testnet
import TorControl

/// A black box on the real-Tor lane (`"tor": "debian"` in its profile): the lane's slot, censor
/// and capture on the private network's world, with Debian's tor started by the lane in the
/// device as the program's Tor (SOCKS 127.0.0.1:39050, control port 39051, cookie in its data
/// directory), pinned: its torrc names only the network's authorities, no fallback
/// directories. Then the program, started by `failclosed program-launch` (with
/// after-bootstrap, once tor's notice log says 100%). tor's timeline comes from its logs.
final class ProgramRealLaneRun: RealTorLaneRun {
  let program: ProgramSpec
  private var tor: TorClientProcess?

  init(_ scenario: Scenario, lane: RealTorLane, program: ProgramSpec) throws {
    self.program = program
    try super.init(scenario, lane: lane)
    try runner.startExitResolver()
  }

  /// The program keeps the wall clock from its own start, as the tor the lane starts does.
  override var clockSharing: RunClockSharing { .own }

  /// Where tor keeps its state and logs: the directory the lane's log watcher reads.
  var torDirectory: String { workDirectory + "/state/tor" }

  override func startTorSide(handOver: EpochHandOver?, clockPage: String?) throws {
    try super.startTorSide(handOver: nil, clockPage: clockPage)
    let torrc =
      ClientTorrc.options(
        dataDirectory: torDirectory, logDirectory: torDirectory, socksPort: 39050,
        controlPort: 39051, bridges: [], disableNetwork: false)
      + ["UseDefaultFallbackDirs 0"] + runner.testnet.network.builder.common
    let client = try TorClientProcess(
      torrc: torrc.joined(separator: "\n") + "\n", dataDirectory: torDirectory,
      prefix: ["ip", "netns", "exec", sandbox.device.name])
    sandbox.recordProcess(client.pid, group: false)
    tor = client
    // Started with Tor means with a tor that listens, as the mock does before time 0 (a
    // program started before tor opens its port is refused, a race of set-up, not of the
    // program): wait, bounded, for its SOCKS listener.
    MockLane.waitForLine("Opened Socks listener", in: torDirectory + "/notice.log", seconds: 10)
  }

  override func appCommand(actionsFile: String, stateDirectory: String) -> [String] {
    ScenarioCommandLines.programLaunch(
      program, scenario: scenario, executable: runner.options.executable,
      workDirectory: workDirectory, bootstrapLog: torDirectory + "/notice.log")
  }

  override func stopTorSide() { tor?.stop() }

  override func tearDown() {
    tor?.stop()
    super.tearDown()
  }
}
