import Foundation

/// Runs blocking work (connect, accept, read, pcap) on a dedicated thread, never on Swift's
/// cooperative pool, which is only as wide as the core count (two here) and would deadlock.
public enum BlockingIO {
  public static func run<T: Sendable>(
    _ name: String = "failclosed.blocking", _ work: @escaping @Sendable () throws -> T
  ) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      let thread = Thread {
        do { continuation.resume(returning: try work()) } catch {
          continuation.resume(throwing: error)
        }
      }
      thread.name = name
      thread.start()
    }
  }

  /// Starts a long-lived thread (a listener loop, a capture loop).
  public static func detach(_ name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.name = name
    thread.start()
  }

  /// Writes to closed sockets must return EPIPE, not kill the process.
  public static func ignoreSIGPIPE() {
    signal(SIGPIPE, SIG_IGN)
  }
}
