import FailClosedSupport
import Foundation
import SOCKS

/// The load client for SOCKS proxies (the mock Tor, microsocks, dante): connection rate, bulk
/// throughput and added latency, each against an in-process echo server on loopback.
enum SOCKSLoad {
  struct Result: Codable {
    var proxy: String
    var connectionsPerSecond: Double
    var failedConnections: Int
    var bulkMegabytesPerSecond: Double
    var directLatencyMicroseconds: Double
    var proxiedLatencyMicroseconds: Double
    /// Connections per second and failures with `manyClientsCount` clients at once.
    var manyClients: Double
    var manyClientsFailed: Int
    var manyClientsCount: Int
    var addedLatencyMicroseconds: Double { proxiedLatencyMicroseconds - directLatencyMicroseconds }
  }

  /// Opens a stream to `target` through the SOCKS5 proxy at `proxy` (no auth, CONNECT by IP).
  static func open(proxy: SocketAddress, target: SocketAddress) throws -> Socket {
    let socket = try connect(proxy)
    var handshake = try SOCKSClientHandshake(target: .ipv4(target.bytes), port: target.port)
    try socket.write(handshake.greeting())
    var pending: [UInt8] = []
    while true {
      let action = handshake.handle(pending)
      pending.removeFirst(action.consumed)
      if !action.send.isEmpty { try socket.write(action.send) }
      switch action.outcome {
      case .finished: return socket
      case .failed(let error): throw error
      case .continueHandshake: continue
      case .needMoreInput:
        let bytes = try socket.read(max: 512)
        guard !bytes.isEmpty else { throw SystemError("socks reply", code: ECONNRESET) }
        pending += bytes
      }
    }
  }

  /// A blocking connection whose reads, writes and connect give up after 10 s (SO_SNDTIMEO
  /// bounds a blocking connect too): four system calls for the client's side of a connection,
  /// where `Socket.connect`'s deadline (non-blocking connect, poll, blocking again) and its
  /// check against connecting to itself (no use against a listening proxy) took eleven. The
  /// same for every proxy; its cost was the generator's, on the cores the proxy runs on.
  static func connect(_ address: SocketAddress) throws -> Socket {
    let socket = try Socket.tcp(address.family)
    socket.setTimeouts(seconds: 10)
    let result = address.withSockAddr { Glibc.connect(socket.fd, $0, $1) }
    guard result == 0 else {
      let error = SystemError("connect(\(address))", code: errno == EINPROGRESS ? ETIMEDOUT : errno)
      socket.close()
      throw error
    }
    return socket
  }

  /// Connections per second: `concurrency` threads each open a stream, echo one byte, close.
  static func connectionRate(
    proxy: SocketAddress, target: SocketAddress, seconds: Double, concurrency: Int
  ) -> (rate: Double, failed: Int) {
    let counts = Counter()
    let deadline = Date().addingTimeInterval(seconds)
    let group = DispatchGroup()
    let start = Date()
    for index in 0..<concurrency {
      group.enter()
      BlockingIO.detach("load.\(index)") {
        while Date() < deadline {
          do {
            let socket = try open(proxy: proxy, target: target)
            try socket.write([0x2A])
            let echoed = try socket.read(max: 1)
            socket.close()
            counts.add(ok: echoed == [0x2A])
          } catch {
            counts.add(ok: false)
          }
        }
        group.leave()
      }
    }
    group.wait()
    let elapsed = Date().timeIntervalSince(start)
    return (Double(counts.ok) / elapsed, counts.failed)
  }

  /// One stream, `megabytes` sent one way through the proxy to the sink, which confirms them.
  static func bulk(proxy: SocketAddress, target: SocketAddress, megabytes: Int) throws -> Double {
    let socket = try open(proxy: proxy, target: target)
    let total = megabytes * 1_048_576
    let chunk = [UInt8](repeating: 0x61, count: 65536)
    let start = Date()
    try socket.write((0..<8).map { UInt8((UInt64(total) >> (56 - 8 * UInt64($0))) & 0xFF) })
    var sent = 0
    while sent < total {
      try socket.write(chunk)
      sent += chunk.count
    }
    let answer = try socket.read(max: 1)
    socket.close()
    let elapsed = Date().timeIntervalSince(start)
    guard answer == [0x01] else {
      throw SystemError("bulk: the sink did not confirm \(total) bytes", code: EIO)
    }
    return Double(total) / 1_048_576 / elapsed
  }

  /// Median round trip of one byte on an open stream, in microseconds.
  static func latency(of socket: Socket, samples: Int) throws -> Double {
    var times: [Double] = []
    for _ in 0..<samples {
      let start = DispatchTime.now().uptimeNanoseconds
      try socket.write([0x01])
      _ = try socket.read(max: 1)
      times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
    }
    times.sort()
    return times[times.count / 2]
  }

  static let manyClients = 1000

  static func run(proxy: SocketAddress, label: String, quick: Bool, only: String? = nil) throws
    -> Result
  {
    let echo = try EchoServer()
    defer { echo.stop() }
    if let only {
      // One figure alone, for profiling a proxy on it (perf, strace): the others stay zero.
      let seconds = quick ? 1.5 : 5
      var result = Result(
        proxy: label, connectionsPerSecond: 0, failedConnections: 0, bulkMegabytesPerSecond: 0,
        directLatencyMicroseconds: 0, proxiedLatencyMicroseconds: 0, manyClients: 0,
        manyClientsFailed: 0, manyClientsCount: manyClients)
      switch only {
      case "connections":
        (result.connectionsPerSecond, result.failedConnections) = connectionRate(
          proxy: proxy, target: echo.address, seconds: seconds, concurrency: 16)
      case "many":
        (result.manyClients, result.manyClientsFailed) = connectionRate(
          proxy: proxy, target: echo.address, seconds: seconds, concurrency: manyClients)
      default:
        throw SystemError("--only \(only): expected connections or many", code: EINVAL)
      }
      return result
    }
    let rate = connectionRate(
      proxy: proxy, target: echo.address, seconds: quick ? 1.5 : 5, concurrency: 16)
    // The median of three streams: one stream's rate moves by half between runs here.
    let bulkRates = try (0..<3).map { _ in
      try stage("bulk") {
        try bulk(proxy: proxy, target: echo.sinkAddress, megabytes: quick ? 64 : 512)
      }
    }.sorted()
    let bulkRate = bulkRates[1]
    let direct = try Socket.connect(to: echo.address, timeout: 5)
    let directLatency = try latency(of: direct, samples: quick ? 500 : 5000)
    direct.close()
    let proxied = try stage("latency") { try open(proxy: proxy, target: echo.address) }
    let proxiedLatency = try stage("latency") {
      try latency(of: proxied, samples: quick ? 500 : 5000)
    }
    proxied.close()
    // Last, a thousand clients at once: a proxy that serves few at a time shows failures (and
    // one that falls over loses no other figure).
    let many = connectionRate(
      proxy: proxy, target: echo.address, seconds: quick ? 1.5 : 5, concurrency: manyClients)
    return Result(
      proxy: label, connectionsPerSecond: rate.rate, failedConnections: rate.failed,
      bulkMegabytesPerSecond: bulkRate, directLatencyMicroseconds: directLatency,
      proxiedLatencyMicroseconds: proxiedLatency, manyClients: many.rate,
      manyClientsFailed: many.failed, manyClientsCount: manyClients)
  }
}

/// Names the measurement a failure happened in.
struct StageError: Error, CustomStringConvertible {
  let stage: String
  let underlying: any Error
  var description: String { "\(stage): \(underlying)" }
}

func stage<T>(_ name: String, _ body: () throws -> T) throws -> T {
  do { return try body() } catch { throw StageError(stage: name, underlying: error) }
}

/// Thread-safe success and failure counts.
final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  private(set) var ok = 0
  private(set) var failed = 0
  func add(ok success: Bool) {
    lock.withLock {
      if success { ok += 1 } else { failed += 1 }
    }
  }
}
