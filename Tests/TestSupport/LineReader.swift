import FailClosedSupport
import Foundation

/// Reads a child's output line by line on its own thread, stamping each line with `clock` as it
/// arrives, so a test waits for the line that says something happened ("control port on ...")
/// instead of sleeping for a guessed time.
public final class LineReader: @unchecked Sendable {
  private let condition = NSCondition()
  private var lines: [(String, Double)] = []
  private var ended = false

  public init(_ handle: FileHandle, clock: any HarnessClock = SystemClock()) {
    Thread.detachNewThread { [self] in
      var pending = Data()
      while true {
        let chunk = handle.availableData
        let now = clock.now
        condition.lock()
        if chunk.isEmpty {
          ended = true
          condition.broadcast()
          condition.unlock()
          return
        }
        pending.append(chunk)
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
          lines.append((String(decoding: pending[..<newline], as: UTF8.self), now))
          pending.removeSubrange(...newline)
        }
        condition.broadcast()
        condition.unlock()
      }
    }
  }

  /// The first line containing `text` and when it arrived; nil if the output ends without it
  /// (or after `timeout` real seconds).
  public func waitFor(_ text: String, timeout: Double = 20) -> (String, Double)? {
    let limit = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while true {
      if let found = lines.first(where: { $0.0.contains(text) }) { return found }
      if ended || !condition.wait(until: limit) { return nil }
    }
  }
}
