import Scenarios
import SystemUnderTest

extension TorTimelineEntry {
  /// The `tor` events of a control-port backend, in order, as timeline entries.
  public static func timeline(from events: [SystemUnderTest.AppEvent]) -> [TorTimelineEntry] {
    events.filter { $0.kind == .tor }.map { event in
      func text(_ key: String) -> String? {
        guard let value = event[key]?.description, !value.isEmpty else { return nil }
        return value
      }
      func number(_ key: String) -> Int? {
        text(key).flatMap { Int($0) ?? Double($0).map { Int($0) } }
      }
      return TorTimelineEntry(
        time: event.time, source: .control, phase: text("phase") ?? "?",
        progress: number("progress"), tag: text("tag"), summary: text("summary"),
        reason: text("reason"), count: number("count"), command: text("command"),
        detail: text("detail"))
    }
  }
}
