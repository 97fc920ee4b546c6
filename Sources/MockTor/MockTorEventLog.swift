import Foundation

/// The mock's event log: one JSON object per line, in memory and optionally in a file.
/// Every record has "time" (seconds of the mock's clock since start) and "event" (its kind):
/// "socks" (a request and its outcome), "socks_rejected" (a failed handshake), "bootstrap",
/// "listener", and whatever other components log (the control port logs "control").
public final class MockTorEventLog: @unchecked Sendable {
  private let lock = NSLock()
  private var records: [[String: JSONValue]] = []
  private let file: FileHandle?
  private let encoder: JSONEncoder
  /// In-memory records kept (oldest dropped first); the file keeps everything.
  public let memoryLimit: Int

  public init(path: String? = nil, memoryLimit: Int = 50_000) throws {
    if let path {
      guard FileManager.default.createFile(atPath: path, contents: nil) else {
        throw MockTorError.eventLog(path: path, reason: "cannot create the file")
      }
      guard let handle = FileHandle(forWritingAtPath: path) else {
        throw MockTorError.eventLog(path: path, reason: "cannot open the file for writing")
      }
      file = handle
    } else {
      file = nil
    }
    encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    self.memoryLimit = memoryLimit
  }

  deinit { try? file?.close() }

  /// Appends a record; `time` and `event` are added to `fields`.
  public func record(_ event: String, time: Double, _ fields: [String: JSONValue] = [:]) {
    var record = fields
    record["event"] = .string(event)
    record["time"] = .double((time * 1000).rounded() / 1000)
    let line = (try? encoder.encode(record)).map { $0 + Data("\n".utf8) }
    lock.withLock {
      records.append(record)
      if records.count > memoryLimit { records.removeFirst(records.count - memoryLimit) }
      if let line { file?.write(line) }
    }
  }

  /// The same with text fields, the shape the control port's log hook hands over.
  public func record(_ event: String, time: Double, strings fields: [String: String]) {
    record(event, time: time, fields.mapValues { JSONValue.string($0) })
  }

  /// Records so far, oldest first.
  public var events: [[String: JSONValue]] { lock.withLock { records } }

  /// Records of one kind.
  public func events(_ kind: String) -> [[String: JSONValue]] {
    events.filter { $0["event"] == .string(kind) }
  }
}
