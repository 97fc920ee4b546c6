import Foundation
import Scenarios
import SystemUnderTest

/// Follows the app's event file while it is written and hands each complete new line on as a
/// ``ScenarioEvent``: what `replay` prints as the run goes.
final class EventStream: @unchecked Sendable {
  let path: String
  let onEvent: @Sendable (ScenarioEvent) -> Void
  private var offset: UInt64 = 0
  private var partial = Data()

  init(path: String, onEvent: @escaping @Sendable (ScenarioEvent) -> Void) {
    self.path = path
    self.onEvent = onEvent
  }

  /// Reads what was appended since the last call; only the runner's thread calls it.
  func poll() {
    guard let handle = FileHandle(forReadingAtPath: path) else { return }
    defer { try? handle.close() }
    guard (try? handle.seek(toOffset: offset)) != nil,
      let data = try? handle.readToEnd(), !data.isEmpty
    else { return }
    offset += UInt64(data.count)
    partial.append(data)
    while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
      let line = String(decoding: partial[partial.startIndex..<newline], as: UTF8.self)
      partial.removeSubrange(partial.startIndex...newline)
      if line.hasPrefix("{"), let event = try? AppEvent(jsonLine: line) {
        onEvent(ScenarioEvent(event))
      }
    }
  }
}
