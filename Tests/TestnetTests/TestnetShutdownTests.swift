import FailClosedSupport
import Foundation
import Glibc
import Testing

@testable import Testnet

/// `testnet down` returned while tor and obfs4proxy were still exiting, so `down` then `up`
/// could collide. Stand-ins play them here (no real tor on the host's loopback): a "tor" that
/// takes 0.3 s to exit on SIGTERM and starts an "obfs4proxy" that ignores its parent's death.
@Suite struct TestnetShutdownTests {
  static func copy(_ program: String, to path: String) throws {
    // The program itself, not a link to it (/bin/sh is a link to dash).
    let real = URL(fileURLWithPath: program).resolvingSymlinksInPath().path
    try FileManager.default.copyItem(atPath: real, toPath: path)
    chmod(path, 0o755)
  }

  @Test func downReturnsOnlyWhenEveryProcessHasExitedAndLeavesOthersAlone() throws {
    let base = NSTemporaryDirectory() + "fc-testnet-down-\(getpid())-" + UUID().uuidString
    let network = base + "/net"
    try FileManager.default.createDirectory(
      atPath: network + "/auth1", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: base + "/bin", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: base) }
    try Self.copy("/bin/sh", to: base + "/bin/tor")
    try Self.copy("/bin/sleep", to: base + "/bin/obfs4proxy")

    let actions = FileActions()
    actions.open("/dev/null", to: 1, flags: O_WRONLY)
    let script =
      "trap 'sleep 0.3; exit 0' TERM; \(base)/bin/obfs4proxy 1000 & "
      + "while :; do sleep 0.05; done"
    let tor = try Spawner.spawn(
      [base + "/bin/tor", "-c", script, "tor", "-f", network + "/auth1/torrc"], actions: actions)
    // A recorded PID now used by something else: never signalled.
    let stranger = try Spawner.spawn(["/bin/sleep", "30"], actions: actions)
    defer {
      kill(stranger, SIGKILL)
      _ = Spawner.wait(stranger)
    }
    // The stand-in's child is up before the network is stopped.
    var children: [Int32] = []
    for _ in 0..<500 where children.isEmpty {
      children = TestnetShutdown.descendants(of: [tor]).filter {
        TestnetShutdown.arguments($0).first?.hasSuffix("obfs4proxy") == true
      }
      if children.isEmpty { usleep(10_000) }
    }
    let obfs4 = try #require(children.first)

    let state = TestnetState(
      directory: network, pids: ["auth1": tor, "exit1": stranger], allowlist: [],
      bridgeLine: nil, clientTorrc: network + "/client.torrc", readySeconds: 1)
    let outcome = TestnetShutdown.stop(state, grace: 0.5, deadline: 10)
    // Returned: so both have exited, not merely been signalled.
    #expect(!TestnetShutdown.isAlive(tor))
    #expect(!TestnetShutdown.isAlive(obfs4))
    #expect(outcome.stillRunning.isEmpty)
    #expect(outcome.stopped >= 2)  // tor, obfs4proxy (and the stand-in's own sleep)
    #expect(outcome.notOurs == ["exit1 (pid \(stranger))"])
    #expect(TestnetShutdown.isAlive(stranger))
    _ = Spawner.wait(tor)
  }

  @Test func stateIsPerDirectoryAndPerUser() {
    #expect(TestnetState.path(forDirectory: "/a/net") == "/a/net.state.json")
    #expect(TestnetState.path(forDirectory: "/a/net/") == "/a/net.state.json")
    #expect(TestnetState.path(forDirectory: "/b/net") != TestnetState.path(forDirectory: "/a/net"))
    #expect(TestnetState.defaultDirectory == "/run/failclosed/testnet-\(getuid())/net")
  }
}
