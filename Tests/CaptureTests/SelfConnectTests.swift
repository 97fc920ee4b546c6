import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// Linux picks ephemeral ports from a range that includes 39050, bitchat's SOCKS port: a
/// connect to that port while nothing listens can choose it as its own source and connect to
/// itself. Socket.connect must call that refused, or a stalled mock Tor looks bootstrapped to
/// the app's SOCKS probe (seen once in a CI run). In a namespace whose ephemeral range is the
/// one port, the self-connection is certain; a real listener on another port is the control.
@Suite(.serialized) struct SelfConnectTests {
  @Test(.needsRoot)
  func aConnectionToItselfIsRefusedAndARealListenerIsNot() throws {
    let namespace = try TestNamespace()
    defer { namespace.remove() }
    #expect(
      try namespace.shell("sysctl -q -w net.ipv4.ip_local_port_range='39050 39050'") == 0)
    let outcome = ThreadOutcome()
    // setns on a thread of its own: the test's thread belongs to the cooperative pool.
    let thread = Thread {
      do {
        try namespace.enter()
        let target = SocketAddress("127.0.0.1:39050")!
        do {
          let socket = try Socket.connect(to: target, timeout: 2)
          socket.close()
          outcome.set("connected")
        } catch let error as SystemError {
          outcome.set(error.code == ECONNREFUSED ? "refused: \(error)" : "other: \(error)")
        }
        // The refused self-connection was closed with RST: no TIME_WAIT keeps a listener that
        // comes later (the mock's SOCKS at its bootstrap's end) from binding the port.
        do {
          let late = try Socket.listen(on: SocketAddress("127.0.0.1:39050")!)
          late.close()
          outcome.setPortFree(true)
        } catch {
          outcome.setPortFree(false)
        }
        // The control: with a listener on the one ephemeral port's neighbour, the connect
        // (from 39050) succeeds.
        let listener = try Socket.listen(on: SocketAddress("127.0.0.1:39051")!)
        defer { listener.close() }
        let client = try Socket.connect(to: SocketAddress("127.0.0.1:39051")!, timeout: 2)
        client.close()
        outcome.setControl(true)
      } catch {
        outcome.set("setup failed: \(error)")
        outcome.setControl(false)
      }
    }
    thread.start()
    #expect(outcome.wait(), "the connecting thread did not finish")
    #expect(outcome.result?.hasPrefix("refused") == true, "\(outcome.result ?? "nothing")")
    #expect(outcome.control)
    #expect(outcome.portFree, "the port stayed held after the refused self-connection")
  }
}

/// What the namespace thread saw, read by the test once the thread signals.
final class ThreadOutcome: @unchecked Sendable {
  private let lock = NSLock()
  private let done = DispatchSemaphore(value: 0)
  private var value: String?
  private var controlPassed = false
  private var portFreed = false

  func set(_ text: String) {
    lock.withLock {
      if value == nil { value = text }
    }
  }

  func setControl(_ passed: Bool) {
    lock.withLock { controlPassed = passed }
    done.signal()
  }

  func setPortFree(_ free: Bool) { lock.withLock { portFreed = free } }

  var result: String? { lock.withLock { value } }
  var portFree: Bool { lock.withLock { portFreed } }
  var control: Bool { lock.withLock { controlPassed } }

  /// Waits for the thread (bounded: 10 s).
  func wait() -> Bool { done.wait(timeout: .now() + 10) == .success }
}
