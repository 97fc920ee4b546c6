import FailClosedSupport
import Foundation
import Glibc
import TestSupport
import Testing
import TorControl

/// 10,000 malformed, half-open and slow SOCKS and control connections against the mock Tor
/// (the real `failclosed mock-tor` process, so its memory is its own), while good clients keep
/// being served on both ports. Prints the good clients' latency during the attack and the
/// mock's peak memory; asserts every good request was served and the memory stayed bounded.
@Suite(.serialized) struct HostileLoadTests {
  /// Peak resident memory of `pid` in KiB (VmHWM).
  static func peakMemoryKiB(_ pid: pid_t) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
      return nil
    }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
      return Int(line.split(separator: " ").dropFirst().first ?? "")
    }
    return nil
  }

  static func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
  }

  @Test(
    .needsFailclosedBinary)
  func tenThousandHostileConnectionsWhileGoodClientsAreServed() async throws {
    let web = try TinyHTTPServer()
    defer { web.stop() }
    let socksPort = try freeLoopbackPort()
    let controlPort = try freeLoopbackPort()
    let mock = try ChildProcess(
      try #require(FailclosedBinary.built),
      [
        "mock-tor", "--personality", "ctor", "--listen", "127.0.0.1:\(socksPort)",
        "--bootstrap-plan", "healthy:0", "--control-port", "\(controlPort)",
        "--map", "web.test=127.0.0.1:\(web.port)",
      ])
    defer { mock.stop() }
    let proxy = SocketAddress("127.0.0.1:\(socksPort)")!
    let control = SocketAddress("127.0.0.1:\(controlPort)")!
    #expect(await waitUntil(timeout: 20) { (try? fetch(through: proxy, host: "web.test")) != nil })
    let baseline = Self.peakMemoryKiB(mock.pid) ?? 0

    let attacking = Mutex(true)
    let good = Mutex((socks: [Double](), control: [Double](), failures: [String]()))
    // The good clients: a fetch through SOCKS and an authenticated GETINFO, over and over.
    let goodDone = DispatchSemaphore(value: 0)
    BlockingIO.detach("test.good-clients") {
      defer { goodDone.signal() }
      var rounds = 0
      // Until the attack ends, and at least 20 rounds; bounded by 2,000.
      while rounds < 2000 && (attacking.withLock { $0 } || rounds < 20) {
        rounds += 1
        let start = Date()
        do {
          let page = try fetch(through: proxy, host: "web.test")
          if !page.hasSuffix(web.body) { throw SystemError("fetch: wrong page", code: EPROTO) }
          let elapsed = Date().timeIntervalSince(start) * 1000
          good.withLock { $0.socks.append(elapsed) }
        } catch {
          good.withLock { $0.failures.append("socks: \(error)") }
        }
        let controlStart = Date()
        do {
          let client = try ControlTestClient(port: controlPort)
          var events: [ControlMessage] = []
          guard try client.command("AUTHENTICATE\r\n", events: &events)?.code == 250,
            try client.command("GETINFO version\r\n", events: &events)?.code == 250
          else { throw SystemError("control: refused", code: EPROTO) }
          let elapsed = Date().timeIntervalSince(controlStart) * 1000
          good.withLock { $0.control.append(elapsed) }
        } catch {
          good.withLock { $0.failures.append("control: \(error)") }
        }
      }
    }

    // The attack: 10,000 connections, half on each port, held open until the end: silent
    // (half-open), a partial greeting, garbage, a request trickled in and stalled.
    let attackStart = Date()
    let (opened, refused) = try await BlockingIO.run("test.attack") {
      var rng = SystemRandomNumberGenerator()
      var held: [Socket] = []
      held.reserveCapacity(10_000)
      var refused = 0
      for index in 0..<10_000 {
        let target = index % 2 == 0 ? proxy : control
        guard let socket = try? Socket.connect(to: target, timeout: 5) else {
          refused += 1
          continue
        }
        switch (index / 2) % 4 {
        case 0: break
        case 1: try? socket.write(target == proxy ? [0x05] : Array("AUTHEN".utf8))
        case 2: try? socket.write((0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) })
        default:
          try? socket.write(
            target == proxy
              ? [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, 0x20, 0x61]
              : Array("GETINFO ver".utf8))
        }
        held.append(socket)
      }
      let opened = held.count
      for socket in held { socket.close() }
      return (opened, refused)
    }
    let attackSeconds = Date().timeIntervalSince(attackStart)
    attacking.withLock { $0 = false }
    goodDone.wait()
    let peak = Self.peakMemoryKiB(mock.pid) ?? 0
    let (socks, controlLatency, failures) = good.withLock { ($0.socks, $0.control, $0.failures) }
    print(
      "hostile load: \(opened) hostile connections opened (\(refused) not accepted) in "
        + String(format: "%.1f s", attackSeconds) + "; good SOCKS fetches \(socks.count), "
        + String(
          format: "p50 %.1f ms, p99 %.1f ms, max %.1f ms", Self.percentile(socks, 0.5),
          Self.percentile(socks, 0.99), socks.max() ?? .nan)
        + "; good control sessions \(controlLatency.count), "
        + String(
          format: "p50 %.1f ms, p99 %.1f ms, max %.1f ms", Self.percentile(controlLatency, 0.5),
          Self.percentile(controlLatency, 0.99), controlLatency.max() ?? .nan)
        + "; mock peak RSS \(baseline / 1024) MiB before, \(peak / 1024) MiB after; "
        + "good failures \(failures.count)")
    #expect(failures.isEmpty, "\(failures.prefix(5))")
    #expect(socks.count >= 20 && controlLatency.count >= 20)
    #expect(opened >= 9_000, "only \(opened) of 10,000 hostile connections were accepted")
    // Bounded: a connection costs the mock a descriptor and a small buffer, not megabytes.
    #expect(peak < 256 * 1024, "mock peak RSS \(peak / 1024) MiB")
    // And it still serves afterwards.
    #expect(try fetch(through: proxy, host: "web.test").hasSuffix(web.body))
  }
}
