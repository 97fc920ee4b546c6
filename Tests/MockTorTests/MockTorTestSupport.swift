import FailClosedSupport
import Foundation
import MockTor
import TorControl

/// A one-page HTTP/1.0 server on 127.0.0.1 for the mock to reach.
final class TinyHTTPServer: @unchecked Sendable {
  let listener: Socket
  let port: UInt16
  let body: String
  private let lock = NSLock()
  private var stopped = false

  init(body: String = "hello through the mock\n") throws {
    listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    port = listener.localAddress!.port
    self.body = body
    BlockingIO.detach("test.http") { [self] in serve() }
  }

  private func serve() {
    while !lock.withLock({ stopped }) {
      guard let (client, _) = try? listener.accept() else { return }
      BlockingIO.detach("test.http.client") { [body] in
        client.setTimeouts(seconds: 5)
        var request: [UInt8] = []
        while !request.ends(with: Array("\r\n\r\n".utf8)), request.count < 65536 {
          guard let chunk = try? client.read(), !chunk.isEmpty else { break }
          request += chunk
        }
        let response =
          "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        try? client.write(Array(response.utf8))
        client.close()
      }
    }
  }

  func stop() {
    lock.withLock { stopped = true }
    listener.close()
  }
}

extension Array where Element == UInt8 {
  func ends(with suffix: [UInt8]) -> Bool {
    count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
  }
}

/// Runs a program to completion (bounded by `timeout` seconds), off the cooperative pool.
func runProgram(
  _ path: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 20
)
  async throws -> (status: Int32, output: String, error: String)
{
  try await BlockingIO.run("test.process") {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
    process.arguments = [String(Int(timeout)), path] + arguments
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (
      process.terminationStatus, String(decoding: outData, as: UTF8.self),
      String(decoding: errData, as: UTF8.self)
    )
  }
}

/// What a SOCKS server said to a scripted client: the bytes, and whether it closed.
struct ProbeResult: Equatable, CustomStringConvertible {
  var bytes: [UInt8]
  var closed: Bool
  var description: String {
    bytes.map { String(format: "%02x", $0) }.joined() + (closed ? " (closed)" : " (open)")
  }
}

/// Sends each step, pausing in between so replies are not pipelined, then reads until the
/// server closes or `wait` seconds pass in silence; `thenStopSending` shuts the client's
/// writing side after the last step (a client that half-closes once its request is out).
func probe(
  _ address: SocketAddress, steps: [[UInt8]], wait: Double = 0.6, thenStopSending: Bool = false
) throws -> ProbeResult {
  let socket = try Socket.connect(to: address, timeout: 5)
  defer { socket.close() }
  var received: [UInt8] = []
  var closed = false
  func drain(for seconds: Double) {
    let deadline = Date().addingTimeInterval(seconds)
    while !closed, Date() < deadline {
      let wait = max(0.001, deadline.timeIntervalSinceNow)
      guard let ready = try? socket.poll(.readable, timeout: wait), !ready.isEmpty else { return }
      guard let chunk = try? socket.read(), !chunk.isEmpty else {
        closed = true
        return
      }
      received += chunk
    }
  }
  for (index, step) in steps.enumerated() {
    if (try? socket.write(step)) == nil {
      closed = true
      break
    }
    let last = index == steps.count - 1
    if last, thenStopSending { socket.shutdownWrite() }
    drain(for: last ? wait : 0.25)
  }
  return ProbeResult(bytes: received, closed: closed)
}

func makeMock(
  _ personality: MockTorPersonality = .ctor, plan: BootstrapPlan = .healthy(after: 0),
  destinations: DestinationMap = DestinationMap(), faults: [String: StreamToxics] = [:],
  eventLog: String? = nil, configure: (inout MockTorConfiguration) -> Void = { _ in }
) throws -> MockTor {
  var configuration = MockTorConfiguration(
    personality: personality, socksAddress: SocketAddress("127.0.0.1:0")!, bootstrapPlan: plan,
    destinations: destinations, faults: faults, eventLogPath: eventLog)
  configure(&configuration)
  let mock = try MockTor(configuration)
  try mock.start()
  return mock
}

/// A child process started through ``Spawner`` (a clean signal mask: children of a Swift test
/// process otherwise inherit dispatch's blocked signals and ignore SIGTERM), killed and reaped
/// by ``stop()``.
final class ChildProcess: @unchecked Sendable {
  let pid: pid_t

  init(_ path: String, _ arguments: [String]) throws {
    let actions = FileActions()
    actions.open("/dev/null", to: 1, flags: O_WRONLY)
    actions.open("/dev/null", to: 2, flags: O_WRONLY)
    pid = try Spawner.spawn([path] + arguments, actions: actions)
  }

  func stop() {
    kill(pid, SIGKILL)
    _ = Spawner.wait(pid)
  }
}
