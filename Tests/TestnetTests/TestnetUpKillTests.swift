import FailClosedSupport
import Foundation
import Glibc
import TestSupport
import Testing

@testable import Testnet

/// Root, ip, Debian's tor, tor-gencert and obfs4proxy, and the built failclosed.
let testnetUpKillNeeds =
  "needs root, ip, Debian's tor and obfs4proxy, and the failclosed binary (swift build)"
let testnetUpKillReady: Bool =
  TestNamespace.available && FailclosedBinary.built != nil
  && ["obfs4proxy", "tor-gencert", "tor"].allSatisfy {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/" + $0)
  }

/// `failclosed testnet up` killed while it starts the network leaves nothing: it used to leave
/// every tor it had started running. The binary runs in a namespace of the test's own (its
/// tors bind nothing on the host's loopback); once a tor of it runs, `up` gets SIGTERM (it
/// stops them, removes the directory and the state, and exits 143 saying so) or SIGKILL (its
/// watcher stops them and removes both), and no tor of the network, no obfs4proxy, no
/// listening socket, no directory and no state is left.
@Suite(
  .serialized,
  .needs(testnetUpKillNeeds, if: testnetUpKillReady))
struct TestnetUpKillTests {

  /// Tors of the network in `directory` (a tor whose arguments name a file under it), and
  /// every process they started (the bridge's obfs4proxy).
  static func leftovers(of directory: String) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    let tors = entries.compactMap(pid_t.init).filter {
      TestnetShutdown.isAlive($0) && TestnetShutdown.isTor($0, of: directory)
    }
    return tors + TestnetShutdown.descendants(of: tors).filter(TestnetShutdown.isAlive)
  }

  /// `tors`: how many tors of it run when `up` is killed: 1, while it starts the rest; 6
  /// (every node with the bridge), while it waits for the consensus.
  @Test(arguments: [(SIGTERM, 1), (SIGKILL, 1), (SIGINT, 6)])
  func upKilledWhileStartingLeavesNothing(signal: Int32, tors: Int) throws {
    let binary = try #require(FailclosedBinary.built, "\(testnetUpKillNeeds)")
    let namespace = try TestNamespace("sig\(signal)")
    let base = NSTemporaryDirectory() + "fc-testnet-up-\(getpid())-\(UUID().uuidString.prefix(8))"
    let directory = base + "/net"
    let statePath = TestnetState.path(forDirectory: directory)
    try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
    let log = base + ".log"
    let actions = FileActions()
    actions.open("/dev/null", to: 0, flags: O_RDONLY)
    actions.open(log, to: 1, flags: O_WRONLY | O_CREAT | O_TRUNC)
    actions.dup(1, to: 2)
    let up = try Spawner.spawn(
      namespace.exec + [binary, "testnet", "up", "--dir", directory, "--timeout", "120"],
      actions: actions)
    var reaped: Int32?
    // Every exit path: `up` and whatever of the network is left (only ours: the directory
    // is this test's own), the namespace, the files.
    defer {
      if reaped == nil {
        kill(up, SIGKILL)
        _ = Spawner.wait(up)
      }
      for pid in Self.leftovers(of: directory) { kill(pid, SIGKILL) }
      namespace.remove()
      try? FileManager.default.removeItem(atPath: base)
      try? FileManager.default.removeItem(atPath: statePath)
      try? FileManager.default.removeItem(atPath: log)
    }
    func output() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    // Killed once `tors` tors of it run (not a sleep: keys from the cache take 50 ms, made
    // ones seconds).
    var running: [pid_t] = []
    let started = waitUntil(timeout: 180) {
      running = Self.leftovers(of: directory).filter {
        TestnetShutdown.isTor($0, of: directory)
      }
      if running.count >= tors { return true }
      if reaped == nil { reaped = Spawner.poll(up) }
      return reaped != nil
    }
    try #require(
      started && running.count >= tors, "\(tors) tors of the network did not run: \(output())")
    try #require(reaped == nil, "`up` exited before it was killed: \(output())")
    kill(up, signal)
    let status = Spawner.wait(up)
    reaped = status

    // Bounded: at once, but for a loaded machine (tor's own check of its owner, every 15 s,
    // is the backstop should the watcher be gone too: not counted on here).
    let bound = 10.0
    var left: [pid_t] = []
    let cleared = waitUntil(timeout: bound) {
      left = Self.leftovers(of: directory)
      return left.isEmpty
    }
    let still = left.map { "\($0) " + TestnetShutdown.arguments($0).joined(separator: " ") }
    #expect(
      cleared,
      "\(bound) s after `up` got signal \(signal): still running \(still) (output: \(output()))")
    // An obfs4proxy whose tor is gone is no tor's child any more: nothing may run in the
    // namespace at all (`up`'s watcher included, once done).
    var inside: [String] = []
    #expect(
      waitUntil(timeout: 5) {
        inside = namespace.processes().map {
          "\($0) " + TestnetShutdown.arguments($0).joined(separator: " ").prefix(80)
        }
        return inside.isEmpty
      }, "still running in the namespace: \(inside)")
    var listening: [String] = []
    #expect(
      waitUntil(timeout: 5) {
        listening = (try? namespace.listeners()) ?? ["ss failed"]
        return listening.isEmpty
      }, "still bound in the namespace: \(listening)")
    if signal != SIGKILL {
      #expect(status == 128 + signal, "exit status \(status): \(output())")
      #expect(output().contains("signal \(signal) while starting"), "\(output())")
    }
    #expect(
      waitUntil(timeout: 5) { !FileManager.default.fileExists(atPath: directory) },
      "\(directory) left")
    #expect(!FileManager.default.fileExists(atPath: statePath), "\(statePath) left")
  }

  /// The positive control: an `up` that finishes gives every tor back (no owner left in its
  /// configuration, so neither tor's 15 s check nor a closed connection ends it) and the
  /// network runs on after `up` has exited, until `down`, which leaves nothing.
  @Test func aReadyNetworkOutlivesUpUntilDown() throws {
    let binary = try #require(FailclosedBinary.built, "\(testnetUpKillNeeds)")
    let namespace = try TestNamespace("ready")
    let base = NSTemporaryDirectory() + "fc-testnet-up-\(getpid())-\(UUID().uuidString.prefix(8))"
    let directory = base + "/net"
    let statePath = TestnetState.path(forDirectory: directory)
    try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
    defer {
      for pid in Self.leftovers(of: directory) { kill(pid, SIGKILL) }
      namespace.remove()
      try? FileManager.default.removeItem(atPath: base)
      try? FileManager.default.removeItem(atPath: statePath)
    }
    let up = try Spawner.capture(
      namespace.exec + [binary, "testnet", "up", "--dir", directory, "--timeout", "120"])
    try #require(up.status == 0, "up exited \(up.status): \(up.stdout)\(up.stderr)")
    let state = try TestnetState.load(from: statePath)
    #expect(state.pids.count == 6)
    let plan = TestnetPlan.loopback()
    let owners: [String] = try namespace.perform {
      try state.pids.sorted { $0.key < $1.key }.map { name, pid in
        guard let node = plan.nodes.first(where: { $0.name == name }) else { return "\(name)?" }
        let link = try TorControlLink(node: node, expecting: pid)
        defer { link.close() }
        let reply = try link.command("GETCONF __OwningControllerProcess")
        return "\(name)=\(reply.value(for: "__OwningControllerProcess") ?? "")"
      }
    }
    #expect(owners == state.pids.keys.sorted().map { "\($0)=" }, "owners left: \(owners)")
    for (name, pid) in state.pids {
      #expect(TestnetShutdown.isAlive(pid), "\(name) (pid \(pid)) ended with `up`")
    }
    let down = try Spawner.capture(
      namespace.exec + [binary, "testnet", "down", "--dir", directory])
    #expect(down.status == 0, "down exited \(down.status): \(down.stdout)\(down.stderr)")
    #expect(Self.leftovers(of: directory).isEmpty)
    #expect(try namespace.listeners().isEmpty)
  }
}
