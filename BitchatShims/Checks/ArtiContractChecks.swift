import Foundation

@testable import ArtiLinux

/// A bootstrap the check controls: finishes when `release()` is called; records the order in
/// which lib.rs's steps happened.
final class ControlledBootstrap: ArtiBootstrap, ArtiClient, @unchecked Sendable {
  private let lock = NSLock()
  private let gate = DispatchSemaphore(value: 0)
  private var steps: [String] = []
  var log: [String] { lock.withLock { steps } }
  func note(_ step: String) { lock.withLock { steps.append(step) } }
  func release() { gate.signal() }

  func bootstrap(stateDirectory: String, cacheDirectory: String) throws -> any ArtiClient {
    note("bootstrap-started")
    gate.wait()
    note("bootstrapped")
    return self
  }

  func serveSOCKS(port: UInt16) throws -> ArtiListener {
    note("socks-bound progress=\(arti_bootstrap_progress())")
    return Listener(owner: self)
  }

  struct Listener: ArtiListener {
    let owner: ControlledBootstrap
    func stop() { owner.note("socks-closed") }
  }
}

/// Bootstraps that all end at once, when `release()` is called: the mock lane's case, where
/// every instance watches the same SOCKS port.
final class SharedGateBootstrap: ArtiBootstrap, ArtiClient, @unchecked Sendable {
  private let condition = NSCondition()
  private var open = false
  func release() {
    condition.lock()
    open = true
    condition.broadcast()
    condition.unlock()
  }

  func bootstrap(stateDirectory: String, cacheDirectory: String) throws -> any ArtiClient {
    condition.lock()
    while !open { condition.wait() }
    condition.unlock()
    return self
  }

  func serveSOCKS(port: UInt16) throws -> ArtiListener { NoListener() }
}

struct NoListener: ArtiListener {
  func stop() {}
}

/// Starts an instance, stops it while it bootstraps, starts the next, then ends both
/// bootstraps at once under `order`; returns what bitchat would then read, once settled.
func restartDuringBootstrap(_ order: ArtiBootstrapEndOrder) -> (
  running: Int32, progress: Int32, summary: String
)? {
  let backend = SharedGateBootstrap()
  ArtiState.shared.backend = backend
  ArtiBackendChoice.orderBootstrapEnds(order)
  defer { ArtiBackendChoice.orderBootstrapEnds(.asTheyHappen) }
  let directory = NSTemporaryDirectory() + "arti-order-\(getpid())"
  defer { try? FileManager.default.removeItem(atPath: directory) }
  guard arti_start(directory, 39999) == 0, waitUntil(2, { summary() == "Bootstrapping..." }),
    arti_stop() == 0, arti_start(directory, 39999) == 0,
    waitUntil(2, { summary() == "Bootstrapping..." })
  else { return nil }
  backend.release()
  // Settled: the stopped instance's task has said "Shutting down..." and made its last stores
  // (stopped-last), or the new one is "Ready" after them (stopped-first).
  let settled = waitUntil(3) {
    order == .stoppedLast
      ? summary() == "Shutting down..." && arti_bootstrap_progress() == 0
      : summary() == "Ready" && arti_bootstrap_progress() == 100
  }
  usleep(50_000)
  let seen = (arti_is_running(), arti_bootstrap_progress(), summary())
  _ = arti_stop()
  return settled ? seen : (seen.0, seen.1, seen.2 + " (not settled)")
}

func summary(length: Int32 = 256) -> String {
  var buffer = [CChar](repeating: 0, count: Int(length))
  _ = arti_bootstrap_summary(&buffer, length)
  return String(cString: buffer)
}

/// arti.h against arti-bitchat/src/lib.rs: return codes, summaries, progress 0/100, the 200 ms
/// stop, SOCKS bound only after the bootstrap.
enum ArtiContractChecks {
  static let all: [Check] = [
    Check("arti: not running: stop, dormant and wake return -1, progress 0, summary empty") {
      guard arti_is_running() == 0 else { return "running before start" }
      guard arti_stop() == -1 else { return "arti_stop without start did not return -1" }
      guard arti_go_dormant() == -1, arti_wake() == -1 else { return "dormant/wake not -1" }
      guard arti_bootstrap_progress() == 0, summary() == "" else { return "not 0 / empty" }
      return nil
    },
    Check("arti: start returns 0, then -1 while running; progress stays 0 during bootstrap") {
      let backend = ControlledBootstrap()
      ArtiState.shared.backend = backend
      let directory = NSTemporaryDirectory() + "arti-check-\(getpid())"
      defer { try? FileManager.default.removeItem(atPath: directory) }
      guard arti_start(directory, 39999) == 0 else { return "arti_start did not return 0" }
      let first = summary()
      guard ["Starting...", "Configuring...", "Bootstrapping..."].contains(first) else {
        return "first summary '\(first)'"
      }
      guard arti_is_running() == 1 else { return "not running after start" }
      guard arti_start(directory, 39999) == -1 else { return "second start did not return -1" }
      guard waitUntil(2, { summary() == "Bootstrapping..." }) else {
        return "summary '\(summary())', never Bootstrapping..."
      }
      guard arti_bootstrap_progress() == 0 else { return "progress before bootstrap" }
      guard !backend.log.contains(where: { $0.hasPrefix("socks-bound") }) else {
        return "SOCKS bound before bootstrap"
      }
      guard FileManager.default.fileExists(atPath: directory) else { return "no data dir" }
      backend.release()
      guard waitUntil(2, { arti_bootstrap_progress() == 100 }) else { return "never 100" }
      guard waitUntil(2, { summary() == "Ready" }) else { return "summary '\(summary())'" }
      guard waitUntil(2, { backend.log.contains("socks-bound progress=100") }) else {
        return "SOCKS not bound after bootstrap: \(backend.log)"
      }
      guard
        backend.log.firstIndex(of: "bootstrapped")! < backend.log.firstIndex(
          of: "socks-bound progress=100")!
      else { return "order \(backend.log)" }
      let stopStarted = Date()
      guard arti_stop() == 0 else { return "arti_stop did not return 0" }
      let stopSeconds = Date().timeIntervalSince(stopStarted)
      guard stopSeconds >= 0.2 else {
        return "arti_stop took \(stopSeconds) s, lib.rs sleeps 200 ms"
      }
      guard arti_is_running() == 0, arti_bootstrap_progress() == 0 else {
        return "still running or progress after stop"
      }
      guard waitUntil(2, { backend.log.contains("socks-closed") }) else { return "listener open" }
      return nil
    },
    Check("arti: bootstrap_summary copies at most len-1 bytes and a NUL, -1 for len <= 0") {
      ArtiState.shared.bootstrapSummary = "Bootstrapping..."
      defer { ArtiState.shared.bootstrapSummary = "" }
      var buffer = [CChar](repeating: 65, count: 4)
      guard arti_bootstrap_summary(&buffer, 4) == 3, buffer[3] == 0,
        String(cString: buffer) == "Boo"
      else { return "len 4 gave \(buffer)" }
      guard arti_bootstrap_summary(&buffer, 0) == -1 else { return "len 0 not -1" }
      guard arti_bootstrap_summary(nil, 8) == -1 else { return "null buffer not -1" }
      var big = [CChar](repeating: 0, count: 256)
      guard arti_bootstrap_summary(&big, 256) == 16 else { return "full copy length" }
      return nil
    },
    Check("arti: a data dir that cannot be made ends in summary 'Error: ...', not running") {
      ArtiState.shared.backend = ControlledBootstrap()
      let file = NSTemporaryDirectory() + "arti-file-\(getpid())"
      FileManager.default.createFile(atPath: file, contents: Data())
      defer { try? FileManager.default.removeItem(atPath: file) }
      guard arti_start(file + "/sub", 39999) == 0 else { return "arti_start did not return 0" }
      guard waitUntil(2, { arti_is_running() == 0 }) else { return "still running" }
      guard summary().hasPrefix("Error: ") else { return "summary '\(summary())'" }
      guard arti_bootstrap_progress() == 0 else { return "progress not 0" }
      return nil
    },
    Check("arti: a data dir that is not UTF-8 returns -2") {
      let bytes: [CChar] = [CChar(bitPattern: 0xff), CChar(bitPattern: 0xfe), 0]
      guard arti_start(bytes, 39999) == -2 else { return "not -2" }
      guard arti_is_running() == 0 else { return "running" }
      return nil
    },
    Check("arti: go_dormant and wake set 'Dormant' and 'Active' while running (unused by bitchat)")
    {
      let backend = ControlledBootstrap()
      ArtiState.shared.backend = backend
      let directory = NSTemporaryDirectory() + "arti-dormant-\(getpid())"
      defer { try? FileManager.default.removeItem(atPath: directory) }
      guard arti_start(directory, 39999) == 0 else { return "start" }
      _ = waitUntil(2) { summary() == "Bootstrapping..." }
      guard arti_go_dormant() == 0, summary() == "Dormant" else { return "dormant" }
      guard arti_wake() == 0, summary() == "Active" else { return "wake" }
      backend.release()
      _ = waitUntil(2) { arti_bootstrap_progress() == 100 }
      _ = arti_stop()
      return nil
    },
    Check("arti: stopped-last: the stopped instance's exit lands last (lib.rs's race, every time)")
    {
      for attempt in 1...3 {
        guard let seen = restartDuringBootstrap(.stoppedLast) else { return "could not restart" }
        guard seen.running == 0, seen.progress == 0, seen.summary == "Shutting down..." else {
          return
            "attempt \(attempt): running \(seen.running), progress \(seen.progress), '\(seen.summary)'"
        }
      }
      return nil
    },
    Check("arti: stopped-first: the new instance's Ready lands last (bitchat recovers)") {
      for attempt in 1...3 {
        guard let seen = restartDuringBootstrap(.stoppedFirst) else { return "could not restart" }
        // lib.rs's old task stores not running on its exit, before the new one's Ready.
        guard seen.running == 0, seen.progress == 100, seen.summary == "Ready" else {
          return
            "attempt \(attempt): running \(seen.running), progress \(seen.progress), '\(seen.summary)'"
        }
      }
      return nil
    },
    Check("arti: external mode is bootstrapped exactly when the mock's SOCKS port accepts") {
      let port = LoopbackListener.closedPort()
      ArtiState.shared.backend = ExternalArtiBootstrap(address: "127.0.0.1:\(port)")
      let directory = NSTemporaryDirectory() + "arti-external-\(getpid())"
      defer { try? FileManager.default.removeItem(atPath: directory) }
      guard arti_start(directory, port) == 0 else { return "start" }
      usleep(400_000)
      guard arti_bootstrap_progress() == 0, summary() == "Bootstrapping..." else {
        return "progress \(arti_bootstrap_progress()) '\(summary())' with nothing listening"
      }
      // The mock binds its SOCKS port once its bootstrap plan completes.
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var one: Int32 = 1
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      address.sin_port = port.bigEndian
      _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      listen(fd, 16)
      defer { close(fd) }
      guard waitUntil(2, { arti_bootstrap_progress() == 100 && summary() == "Ready" }) else {
        return "never 100/Ready once the port listened"
      }
      _ = arti_stop()
      return nil
    },
  ]
}
