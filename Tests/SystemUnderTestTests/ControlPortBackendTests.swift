import FailClosedSupport
import Foundation
import Testing

@testable import SystemUnderTest

@Suite struct ControlPortBackendTests {
  @Test func parsesBootstrapPhaseLines() {
    let reply =
      #"status/bootstrap-phase=NOTICE BOOTSTRAP PROGRESS=45 TAG=loading_descriptors SUMMARY="Loading relay descriptors""#
    #expect(ControlPortClient.bootstrapPhase(reply)! == (45, "Loading relay descriptors"))
    let event = #"STATUS_CLIENT NOTICE BOOTSTRAP PROGRESS=100 TAG=done SUMMARY="Done""#
    #expect(ControlPortClient.bootstrapPhase(event)! == (100, "Done"))
    #expect(ControlPortClient.bootstrapPhase("OK") == nil)
  }

  /// A scripted control port: password auth, SETEVENTS, SETCONF, then bootstrap phases.
  @Test(.timeLimit(.minutes(1)))
  func drivesAControlPortUntilBootstrapped() async throws {
    let listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    defer { listener.close() }
    let address = listener.localAddress!
    let commands = EventCollectorStrings()
    BlockingIO.detach("test.control") {
      guard let (client, _) = try? listener.accept() else { return }
      defer { client.close() }
      client.setTimeouts(seconds: 5)
      var buffer = ""
      var polls = 0
      while let chunk = try? client.read(max: 4096), !chunk.isEmpty {
        buffer += String(decoding: chunk, as: UTF8.self)
        while let end = buffer.range(of: "\r\n") {
          let line = String(buffer[..<end.lowerBound])
          buffer.removeSubrange(..<end.upperBound)
          commands.add(line)
          var reply = "250 OK\r\n"
          if line.hasPrefix("AUTHENTICATE") && line != #"AUTHENTICATE "s3cret""# {
            reply = "515 Authentication failed\r\n"
          } else if line.hasPrefix("GETINFO status/bootstrap-phase") {
            polls += 1
            let progress = polls >= 2 ? 100 : 10
            let summary = polls >= 2 ? "Done" : "Connecting to a relay"
            reply =
              "250-status/bootstrap-phase=NOTICE BOOTSTRAP PROGRESS=\(progress) TAG=x SUMMARY=\"\(summary)\"\r\n250 OK\r\n"
          }
          _ = try? client.write(Array(reply.utf8))
        }
      }
    }
    let progress = try await Self.runBackend(address: address)
    #expect(progress == 100)
    let seen = commands.values
    #expect(seen.first == #"AUTHENTICATE "s3cret""#)
    #expect(seen.contains("SETEVENTS STATUS_CLIENT"))
    #expect(seen.contains("SETCONF DisableNetwork=0"))
    #expect(seen.contains("SETCONF DisableNetwork=1"))
  }

  @AppActor static func runBackend(address: SocketAddress) async throws -> Int {
    let scheduler = ClockScheduler(clock: SystemClock())
    let backend = ControlPortTorBackend(
      control: address, authentication: .password("s3cret"), scheduler: scheduler)
    #expect(backend.start(dataDirectory: "/tmp", socksPort: 39050) == 0)
    #expect(backend.start(dataDirectory: "/tmp", socksPort: 39050) == -1)
    for _ in 0..<100 where backend.bootstrapProgress() < 100 {
      try await Task.sleep(nanoseconds: 50_000_000)
    }
    let progress = backend.bootstrapProgress()
    #expect(backend.bootstrapSummary() == "Done")
    await withCheckedContinuation { continuation in
      backend.stop { continuation.resume() }
    }
    #expect(!backend.isRunning())
    try await Task.sleep(nanoseconds: 100_000_000)
    return progress
  }
}

final class EventCollectorStrings: @unchecked Sendable {
  private let lock = NSLock()
  private var list: [String] = []
  func add(_ value: String) { lock.withLock { list.append(value) } }
  var values: [String] { lock.withLock { list } }
}
