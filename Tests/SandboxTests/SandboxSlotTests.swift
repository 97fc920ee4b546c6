import Audit
import Capture
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// Slots: further device and censor pairs on one world, for scenarios side by side. Each slot
/// reaches the world on its own link, under its own censor, seen by its own capture; nothing
/// one slot does shows in another's capture or passes through another's censor.
@Suite("Sandbox slots", .serialized)
struct SandboxSlotTests {
  static let web = SocketAddress("10.66.1.80:80")!

  /// An HTTP GET from `run`'s device; the world's answer, or nil when the connect failed.
  static func get(_ run: SandboxRun, _ target: SocketAddress) async -> String? {
    try? await run.device.run {
      let socket = try Socket.connect(to: target, timeout: 1)
      defer { socket.close() }
      try socket.write(Array("GET /slot HTTP/1.1\r\nHost: example.org\r\n\r\n".utf8))
      return String(decoding: try socket.read(), as: UTF8.self)
    }
  }

  @Test(.needsRoot)
  func slotsReachTheWorldUnderTheirOwnCensorOnly() async throws {
    let names = SandboxNames.random()
    try await withSandbox(names: names) { run in
      _ = try await BlockingIO.run { try run.startWorld() }
      let a = try await run.createSlot(1)
      let b = try await run.createSlot(2)
      #expect(a.world == run.world && b.world == run.world)
      #expect(a.device != b.device && a.censor != run.censor)
      // Every pair reaches the world's services (v4, v6, any address) through its own link.
      for slot in [run, a, b] {
        for target in ["10.66.1.80:80", "[fd66:0:0:2::80]:80", "192.0.2.7:80"] {
          let reply = await Self.get(slot, SocketAddress(target)!)
          #expect(
            reply?.contains("failclosed world: example.org/slot") == true,
            "\(slot.names.device) -> \(target): \(reply ?? "no answer")")
        }
      }
      // Slot 1's censor blocks the web host; slot 2 and the run's own pair still reach it.
      try await BlockingIO.run {
        try a.applyCensorRules([CensorRule(action: .reset, destination: "10.66.1.80", port: 80)])
      }
      #expect(await Self.get(a, Self.web) == nil)
      #expect(await Self.get(b, Self.web) != nil)
      #expect(await Self.get(run, Self.web) != nil)
      // A slot's teardown leaves the run (and the other slot) whole, and no link in the world.
      await teardownOffPool(a)
      // The kernel frees a deleted namespace, and the links in it, in the background.
      let clock = SystemClock()
      var worldLinks = ""
      repeat {
        worldLinks = try CommandRunner.run(["ip", "-n", names.world, "-o", "link"]).stdout
        if !worldLinks.contains(" eth1@") { break }
        clock.sleepBlocking(seconds: 0.02)
      } while clock.now < 10
      #expect(!worldLinks.contains(" eth1@"), "\(worldLinks)")
      #expect(!(try CommandRunner.run(["ip", "netns", "list"]).stdout).contains(a.names.device))
      #expect(await Self.get(b, Self.web) != nil)
    }
    #expect(Leftovers.of(names) == [])
  }

  /// Canary and control side by side: a leak sent from slot 1's device is caught in slot 1's
  /// capture and absent from slot 2's, whose clean traffic passes; the other way round too.
  @Test(.needsRoot)
  func aLeakInOneSlotIsCaughtThereAndNowhereElse() async throws {
    let names = SandboxNames.random()
    try await withSandbox(names: names) { run in
      _ = try await BlockingIO.run { try run.startWorld() }
      let a = try await run.createSlot(1)
      let b = try await run.createSlot(2)
      for (leaky, clean) in [(a, b), (b, a)] {
        let captures = try await BlockingIO.run {
          try [leaky, clean].map { try $0.openDeviceCapture(allowed: [], pcapPath: nil) }
        }
        // The leak: a DNS question in clear, straight to the world's resolver.
        let question = "slot-\(leaky.names.slot!).leak.example"
        try await leaky.device.run {
          let socket = try DatagramSocket(.ipv4)
          defer { socket.close() }
          let query = DNSMessage.query(id: 7, name: question, type: DNSQuestion.typeA)
          try socket.send(query, to: SocketAddress(host: AddressPlan.resolverV4, port: 53)!)
        }
        // Wait for the leak to be seen by its own capture (not a sleep: its packet count).
        let deadline = SystemClock()
        while captures[0].leakPacketsSeen == 0 && deadline.now < 5 {
          deadline.sleepBlocking(seconds: 0.01)
        }
        let reports = captures.map { $0.stop() }
        #expect(reports[0].verdict == .leak, "\(AuditSummary.text(reports[0]))")
        #expect(reports[0].leaks.contains { $0.leakClass == .dns && $0.names.contains(question) })
        #expect(reports[1].verdict == .pass, "\(AuditSummary.text(reports[1]))")
        #expect(reports[1].leaks.isEmpty)
      }
    }
    #expect(Leftovers.of(names) == [])
  }

  /// A slot that fails half way (its world link's name is taken) leaves nothing of itself; the
  /// run and a later slot are unaffected, and the index can be made again once free.
  @Test(.needsRoot)
  func aSlotThatFailsHalfWayLeavesNothing() async throws {
    let names = SandboxNames.random()
    try await withSandbox(names: names) { run in
      _ = try await BlockingIO.run { try run.startWorld() }
      // eth3 taken in the world: slot 3's namespaces exist when its world link fails.
      try CommandRunner.run([
        "ip", "-n", names.world, "link", "add", "eth3", "type", "veth", "peer", "name", "taken3",
      ])
      await #expect(throws: (any Error).self) { _ = try await run.createSlot(3) }
      let namespaces = try CommandRunner.run(["ip", "netns", "list"]).stdout
      #expect(!namespaces.contains(names.slot(3).device))
      #expect(!namespaces.contains(names.slot(3).censor))
      #expect(!FileManager.default.fileExists(atPath: names.slot(3).resolvConfDirectory))
      await #expect(throws: SlotError.self) { _ = try await run.createSlot(0) }
      let four = try await run.createSlot(4)
      await #expect(throws: SlotError.self) { _ = try await run.createSlot(4) }
      #expect(await Self.get(four, Self.web) != nil)
      #expect(await Self.get(run, Self.web) != nil)
      try CommandRunner.run(["ip", "-n", names.world, "link", "del", "eth3"])
      let three = try await run.createSlot(3)
      #expect(await Self.get(three, Self.web) != nil)
    }
    // The run's teardown took its slots with it.
    #expect(Leftovers.of(names) == [])
    #expect(!(try CommandRunner.run(["ip", "netns", "list"]).stdout).contains(names.prefix))
  }

  /// A run killed outright (SIGKILL: no teardown) leaves its slots too; the reaper knows them
  /// by the run's prefix and removes them with the run.
  @Test(.needsRoot)
  func theSlotsOfADeadOwnerAreReaped() throws {
    let names = SandboxNames.random()
    let run = try SandboxRun.createBlocking(names: names)
    let slot = try run.createSlotBlocking(1)
    SignalTeardown.unregister(run)
    SignalTeardown.unregister(slot)
    try "999999999\n".write(toFile: names.pidFile, atomically: true, encoding: .utf8)
    Reaper.reap()
    #expect(!(try CommandRunner.run(["ip", "netns", "list"]).stdout).contains(names.prefix))
    #expect(Leftovers.of(names) == [])
    #expect(!FileManager.default.fileExists(atPath: names.slot(1).resolvConfDirectory))
  }

  @Test func slotNamesAreTheRunsAndDistinct() {
    let names = SandboxNames(prefix: "fc-1a2b3c")
    let slot = names.slot(2)
    #expect(slot.device == "fc-1a2b3c-s2-dev" && slot.censor == "fc-1a2b3c-s2-cen")
    #expect(slot.world == names.world && slot.pidFile == names.pidFile)
    #expect(slot.namespaces == [slot.device, slot.censor])
    #expect(slot.nftTable == "fc_1a2b3c_s2" && slot.worldLink == "eth2")
    for name in [slot.device, slot.censor, slot.nftTable, slot.masqueradeTable] {
      #expect(SandboxNames.runPrefix(of: name) == names.prefix, "\(name)")
    }
    #expect(Set(slot.namespaces).isDisjoint(with: names.namespaces))
  }
}
