import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

@Suite("Sandbox lifecycle")
struct SandboxLifecycleTests {
  struct Boom: Error {}

  @Test(.needsRoot)
  func buildsTheTopologyAndLeavesNothing() async throws {
    let run = try await SandboxRun.create()
    let names = run.names
    #expect(FileManager.default.fileExists(atPath: names.resolvConfDirectory + "/resolv.conf"))
    let routes = try CommandRunner.run(["ip", "-n", names.device, "route"]).stdout
    #expect(routes.contains("default via \(AddressPlan.censorDeviceSideV4)"))
    let routes6 = try CommandRunner.run(["ip", "-n", names.device, "-6", "route"]).stdout
    #expect(routes6.contains("default via \(AddressPlan.censorDeviceSideV6)"))
    // The device reaches the world through the censor, over IPv4 and IPv6.
    _ = try await BlockingIO.run { try run.startWorld() }
    for target in ["10.66.1.80:80", "[fd66:0:0:2::80]:80", "192.0.2.7:80"] {
      let address = try #require(SocketAddress(target))
      let socket = try await run.device.run { try Socket.connect(to: address, timeout: 2) }
      try socket.write(Array("GET /x HTTP/1.1\r\nHost: example.org\r\n\r\n".utf8))
      let reply = try socket.read()
      #expect(String(decoding: reply, as: UTF8.self).contains("failclosed world: example.org/x"))
    }
    await teardownOffPool(run)
    print("sandbox set-up \(run.setupMilliseconds) ms, teardown \(run.teardownMilliseconds) ms")
    #expect(Leftovers.of(names) == [])
  }

  /// The device's ephemeral ports are Apple's (49152-65535), clear of the Tor side's ports:
  /// in Linux's default range a probe of the unbound 127.0.0.1:39050 could connect to itself
  /// and hold the port the mock binds later (a false FAILED of path-change-and-restart).
  @Test(.needsRoot)
  func theDevicesEphemeralPortsAreClearOfTheTorSidesPorts() async throws {
    let run = try await SandboxRun.create()
    let range = try CommandRunner.run([
      "ip", "netns", "exec", run.names.device, "cat", "/proc/sys/net/ipv4/ip_local_port_range",
    ]).stdout
    #expect(range.split(whereSeparator: \.isWhitespace) == ["49152", "65535"])
    // A client's source port, as the kernel picks it there.
    let sourcePort: UInt16? = try await run.device.run {
      let listener = try Socket.listen(on: SocketAddress("127.0.0.1:39050")!)
      defer { listener.close() }
      let client = try Socket.connect(to: SocketAddress("127.0.0.1:39050")!, timeout: 2)
      defer { client.close() }
      return client.localAddress?.port
    }
    #expect((sourcePort ?? 0) >= 49152, "source port \(String(describing: sourcePort))")
    await teardownOffPool(run)
  }

  @Test(.needsRoot)
  func tearsDownAfterAThrownError() async throws {
    let names = SandboxNames.random()
    await #expect(throws: Boom.self) {
      try await withSandbox(names: names) { run in
        try run.applyCensorRules([CensorRule(action: .drop, port: 443)])
        try run.startWorld()
        throw Boom()
      }
    }
    #expect(Leftovers.of(names) == [])
  }

  @Test(.needsRoot)
  func killsProcessesLeftInTheDevice() async throws {
    let names = SandboxNames.random()
    try await withSandbox(names: names) { run in
      // A daemon that outlives its parent, still inside the device namespace.
      _ = try CommandRunner.run([
        "ip", "netns", "exec", names.device, "sh", "-c", "sleep 60 </dev/null >/dev/null 2>&1 &",
      ])
      let inode = try run.device.inode()
      #expect(!NetworkNamespace.processes(inNamespaceInode: inode).isEmpty)
    }
    #expect(Leftovers.of(names) == [])
  }

  @Test(.needsRoot)
  func reapsTheLeftoversOfADeadOwner() throws {
    let names = SandboxNames.random()
    let run = try SandboxRun.createBlocking(names: names)
    SignalTeardown.unregister(run)
    // Pretend the owner crashed: its recorded PID is one that cannot be alive.
    try "999999999\n".write(toFile: names.pidFile, atomically: true, encoding: .utf8)
    try CommandRunner.run([
      "ip", "link", "add", names.prefix + "-x0", "type", "veth", "peer", "name",
      names.prefix + "-x1",
    ])
    try CommandRunner.run(["nft", "add", "table", "inet", names.nftTable])
    // Another test's reaper may get there first; either way nothing may be left.
    Reaper.reap()
    #expect(Leftovers.of(names) == [])
  }

  @Test(.needsRoot)
  func leavesRunsOfLiveOwnersAlone() async throws {
    try await withSandbox { run in
      Reaper.reap()
      #expect(FileManager.default.fileExists(atPath: run.device.path))
    }
  }

  @Test func namesAreRecognised() {
    #expect(SandboxNames.runPrefix(of: "fc-1a2b3c-dev") == "fc-1a2b3c")
    #expect(SandboxNames.runPrefix(of: "fc_1a2b3c") == "fc-1a2b3c")
    #expect(SandboxNames.runPrefix(of: "fc-1a2b3c.pid") == "fc-1a2b3c")
    #expect(SandboxNames.runPrefix(of: "fc-zzzzzz-dev") == nil)
    #expect(SandboxNames.runPrefix(of: "eth0") == nil)
    #expect(SandboxNames.runPrefix(of: "fc-1a2b3c4") == nil)
  }
}
