import Foundation

/// The driver's stdout: one flat JSON object per line, `t` (seconds since the driver started,
/// 3 decimals), `type`, then the fields in key order: the same lines as `failclosed app`
/// (docs/app-driver.md). Values are strings, numbers or booleans.
final class EventStream: @unchecked Sendable {
  static let shared = EventStream()
  /// Monotonic (CLOCK_MONOTONIC through systemUptime): a wall clock set during a run moves
  /// neither the events' times nor the actions' (a step back of an hour held every action).
  let started = ProcessInfo.processInfo.systemUptime
  private let lock = NSLock()
  /// Where events go: the process's stdout as it was at launch (see `takeStandardOutput`).
  private var output = FileHandle.standardOutput

  /// Keeps the launch stdout for events and sends fd 1 to `logPath`: bitchat's SecureLogger
  /// prints its log to stdout off Apple, and only events may reach the event stream.
  func takeStandardOutput(logPath: String) {
    let events = dup(1)
    guard events >= 0, freopen(logPath, "a", stdout) != nil else { return }
    output = FileHandle(fileDescriptor: events, closeOnDealloc: true)
  }

  var now: Double { ProcessInfo.processInfo.systemUptime - started }

  func record(_ type: String, _ fields: [String: Any]) {
    var parts = ["\"t\":" + String(format: "%.3f", now), "\"type\":" + Self.quote(type)]
    for key in fields.keys.sorted() {
      parts.append(Self.quote(key) + ":" + Self.json(fields[key]!))
    }
    let line = "{" + parts.joined(separator: ",") + "}\n"
    lock.withLock {
      output.write(line.data(using: .utf8)!)
    }
  }

  static func json(_ value: Any) -> String {
    switch value {
    case let flag as Bool: return flag ? "true" : "false"
    case let number as Int: return String(number)
    case let number as Double: return String(format: "%.3f", number)
    default: return quote("\(value)")
    }
  }

  static func quote(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        if scalar.value < 0x20 {
          out += String(format: "\\u%04x", scalar.value)
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out + "\""
  }
}
