import Foundation
import Testing

@testable import Lanes

/// A mock Tor that could not listen (its SOCKS port held) makes the run inconclusive: the app
/// never had its Tor. Read from the mock's event log.
@Suite struct MockListenerErrorTests {
  static func log(_ lines: [String]) throws -> String {
    let path = NSTemporaryDirectory() + "mock-\(UUID().uuidString).jsonl"
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  /// The canary: a bind error at the bootstrap's end, never followed by a listener.
  @Test func aBindErrorNeverRecoveredIsFound() throws {
    let path = try Self.log([
      #"{"event":"bootstrap","progress":100,"summary":"Ready","tag":"done","time":85}"#,
      #"{"error":"SOCKS listener: bind(127.0.0.1:39050): EADDRINUSE","event":"listener-error","time":85}"#,
      #"{"event":"stop","time":100}"#,
    ])
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect(
      MockLaneRun.unrecoveredListenerError(path)
        == "SOCKS listener: bind(127.0.0.1:39050): EADDRINUSE")
  }

  /// Controls: a bind that worked at the next poll, and a run with no bind error.
  @Test func aRecoveredOrCleanListenerIsNot() throws {
    let recovered = try Self.log([
      #"{"error":"bind: EADDRINUSE","event":"listener-error","time":85}"#,
      #"{"event":"listener","socks":"127.0.0.1:39050","time":86}"#,
    ])
    let clean = try Self.log([#"{"event":"listener","socks":"127.0.0.1:39050","time":85}"#])
    defer {
      try? FileManager.default.removeItem(atPath: recovered)
      try? FileManager.default.removeItem(atPath: clean)
    }
    #expect(MockLaneRun.unrecoveredListenerError(recovered) == nil)
    #expect(MockLaneRun.unrecoveredListenerError(clean) == nil)
    #expect(MockLaneRun.unrecoveredListenerError("/nonexistent/mock.jsonl") == nil)
  }
}
