import Foundation

/// The calling thread's timer slack (`/proc/TID/timerslack_ns`: the file is in a process's
/// directory only, not in its tasks', and `/proc/TID` is that thread's): how late the
/// kernel may end its sleeps to batch wake-ups, 50 µs by default. A loop of sub-millisecond
/// sleeps (the event clock's turns, hundreds a run) pays it on every sleep.
public struct ThreadTimerSlack: Sendable {
  /// This thread's file: `/proc/thread-self` links to `PID/task/TID`.
  private static var path: String? {
    var buffer = [CChar](repeating: 0, count: 128)
    let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    let link = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let tid = link.split(separator: "/").last, Int32(tid) != nil else { return nil }
    return "/proc/\(tid)/timerslack_ns"
  }
  private let old: String?

  /// Sets this thread's slack to 1 ns (0 would mean "the default") until `restore`, called on
  /// the same thread. Where the file cannot be written (another kernel) nothing changes.
  public static func finest() -> ThreadTimerSlack {
    guard let path else { return ThreadTimerSlack(old: nil) }
    let old = try? String(contentsOfFile: path, encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let set = write("1", to: path)
    return ThreadTimerSlack(old: set ? old : nil)
  }

  /// This thread's slack now, in nanoseconds; nil where it cannot be read.
  public static var current: Int? {
    path.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
      .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
  }

  /// Puts the thread's old slack back.
  public func restore() {
    if let old, !old.isEmpty, let path = Self.path { _ = Self.write(old, to: path) }
  }

  private static func write(_ value: String, to path: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return value.withCString { Glibc.write(fd, $0, strlen($0)) } > 0
  }
}
