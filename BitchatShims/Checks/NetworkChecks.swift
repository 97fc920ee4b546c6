import Foundation

@testable import Network

/// Collects an NWConnection's states, thread-safely.
final class StateLog: @unchecked Sendable {
  private let lock = NSLock()
  private var states: [NWConnection.State] = []
  func add(_ state: NWConnection.State) { lock.withLock { states.append(state) } }
  var all: [NWConnection.State] { lock.withLock { states } }
}

/// The Network shim against Apple's behaviour for TCP connections and path monitoring.
enum NetworkChecks {
  static let all: [Check] = [
    Check(
      "Network: a socket connected to itself (Linux's ephemeral ports include 39050) is not a connection"
    ) {
      // Deterministic self-connection: bind to a port, then connect to that same port.
      let port = LoopbackListener.closedPort()
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      defer { close(fd) }
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      address.sin_port = port.bigEndian
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard bound == 0, connected == 0 else { return "could not make a self-connection" }
      guard NWConnection.isSelfConnection(fd, port: port) else { return "not recognised" }
      let listener = LoopbackListener()
      defer { listener.close() }
      let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      defer { close(client) }
      var target = sockaddr_in()
      target.sin_family = sa_family_t(AF_INET)
      target.sin_addr.s_addr = inet_addr("127.0.0.1")
      target.sin_port = listener.port.bigEndian
      _ = withUnsafePointer(to: &target) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      return NWConnection.isSelfConnection(client, port: listener.port)
        ? "a real connection taken for a self-connection" : nil
    },
    Check("Network: a connect that reached itself leaves nothing holding the port (Arti binds it)")
    {
      let port = LoopbackListener.closedPort()
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      address.sin_port = port.bigEndian
      func bindListener() -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
          $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
          }
        }
        if bound == 0, listen(fd, 4) == 0 { return fd }
        close(fd)
        return -1
      }
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard bound == 0, connected == 0, NWConnection.isSelfConnection(fd, port: port) else {
        close(fd)
        return "could not make a self-connection"
      }
      // Canary: while the self-connected socket is open, nothing can listen on the port.
      let blocked = bindListener()
      if blocked >= 0 {
        close(blocked)
        close(fd)
        return "the port could be bound beside an open self-connection: the check proves nothing"
      }
      NWConnection.dropSelfConnection(fd)
      let listener = bindListener()
      guard listener >= 0 else { return "the port is still held after the self-connection" }
      close(listener)
      return nil
    },
    Check("Network: a refused TCP connect is .waiting(ECONNREFUSED), never .failed (Apple)") {
      let port = LoopbackListener.closedPort()
      let connection = NWConnection(
        to: .hostPort(host: .ipv4(.loopback), port: NWEndpoint.Port(rawValue: port)!), using: .tcp)
      let log = StateLog()
      connection.stateUpdateHandler = { log.add($0) }
      connection.start(queue: DispatchQueue(label: "check.nw"))
      guard waitUntil(2, { log.all.contains(.waiting(.posix(.ECONNREFUSED))) }) else {
        return "states \(log.all)"
      }
      usleep(300_000)
      guard !log.all.contains(where: { if case .failed = $0 { return true } else { return false } })
      else { return "failed: \(log.all)" }
      connection.cancel()
      guard waitUntil(2, { log.all.last == .cancelled }) else { return "no .cancelled" }
      return log.all.first == .preparing ? nil : "states \(log.all)"
    },
    Check(
      "Network: a listening port gives .preparing, .ready; cancel gives .cancelled, then nothing"
    ) {
      let listener = LoopbackListener()
      defer { listener.close() }
      let connection = NWConnection(
        host: NWEndpoint.Host("127.0.0.1"), port: NWEndpoint.Port(rawValue: listener.port)!,
        using: .tcp)
      let log = StateLog()
      connection.stateUpdateHandler = { log.add($0) }
      connection.start(queue: DispatchQueue(label: "check.nw2"))
      guard waitUntil(2, { log.all.contains(.ready) }) else { return "states \(log.all)" }
      connection.cancel()
      connection.cancel()
      guard waitUntil(2, { log.all.last == .cancelled }) else { return "states \(log.all)" }
      usleep(100_000)
      return log.all == [.preparing, .ready, .cancelled] ? nil : "states \(log.all)"
    },
    Check(
      "Network: NWPathMonitor reports the current path at start, then each change, on its queue"
    ) {
      let monitor = NWPathMonitor()
      let queue = DispatchQueue(label: "check.path")
      let key = DispatchSpecificKey<Int>()
      queue.setSpecific(key: key, value: 3)
      let lock = NSLock()
      var seen: [String] = []
      monitor.pathUpdateHandler = { path in
        let onQueue = DispatchQueue.getSpecific(key: key) == 3
        lock.withLock { seen.append("\(path.status)\(onQueue ? "" : "!queue")") }
      }
      monitor.start(queue: queue)
      guard waitUntil(2, { lock.withLock { seen.count } == 1 }) else { return "no initial path" }
      NWPathMonitor.simulatePathChange(.unsatisfied)
      NWPathMonitor.simulatePathChange(.satisfied)
      guard waitUntil(2, { lock.withLock { seen.count } == 3 }) else { return "got \(seen)" }
      monitor.cancel()
      NWPathMonitor.simulatePathChange(.satisfied)
      usleep(100_000)
      let all = lock.withLock { seen }
      return all == ["satisfied", "unsatisfied", "satisfied"] ? nil : "got \(all)"
    },
  ]
}
