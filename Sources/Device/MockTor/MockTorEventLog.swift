import Foundation

/// The mock's event log: one JSON object per line, in memory and optionally in a file.
/// Every record has "time" (seconds of the mock's clock since start) and "event" (its kind):
/// "socks" (a request and its outcome), "socks_rejected" (a failed handshake), "bootstrap",
/// "listener", and whatever other components log (the control port logs "control").
public final class MockTorEventLog: @unchecked Sendable {
  private let lock = NSLock()
  /// A ring of the newest records: appending past the limit overwrites the oldest in O(1)
  /// (removing from the front of an array cost 50,000 moves per record under a flood).
  private var ring: [Entry] = []
  private var ringStart = 0
  private let path: String?
  private var file: FileHandle?
  private var fileBytes = 0
  private var rotations = 0
  private let encoder: JSONEncoder
  /// In-memory records kept (oldest dropped first).
  public let memoryLimit: Int
  /// The file is rotated to FILE.1 (replacing the previous one) when it would grow past this,
  /// so pipelined commands cannot fill the disk: at most twice this on disk.
  public let fileLimit: Int
  public static let defaultFileLimit = 16 << 20

  public init(path: String? = nil, memoryLimit: Int = 50_000, fileLimit: Int = defaultFileLimit)
    throws
  {
    self.path = path
    if let path { file = try Self.create(path) }
    encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    self.memoryLimit = max(1, memoryLimit)
    self.fileLimit = max(4096, fileLimit)
  }

  private static func create(_ path: String) throws -> FileHandle {
    guard FileManager.default.createFile(atPath: path, contents: nil) else {
      throw MockTorError.eventLog(path: path, reason: "cannot create the file")
    }
    guard let handle = FileHandle(forWritingAtPath: path) else {
      throw MockTorError.eventLog(path: path, reason: "cannot open the file for writing")
    }
    return handle
  }

  deinit { try? file?.close() }

  /// A record as kept: its fields, or what makes them when somebody reads it.
  private enum Entry {
    case fields([String: EventLogValue])
    case deferred(event: String, time: Double, make: @Sendable () -> [String: EventLogValue])

    var fields: [String: EventLogValue] {
      switch self {
      case .fields(let fields): return fields
      case .deferred(let event, let time, let make):
        return MockTorEventLog.stamp(make(), event, time)
      }
    }
  }

  private static func stamp(_ fields: [String: EventLogValue], _ event: String, _ time: Double)
    -> [String: EventLogValue]
  {
    var record = fields
    record["event"] = .string(event)
    record["time"] = .double((time * 1000).rounded() / 1000)
    return record
  }

  /// Appends a record; `time` and `event` are added to `fields`.
  public func record(_ event: String, time: Double, _ fields: [String: EventLogValue] = [:]) {
    append(.fields(Self.stamp(fields, event, time)))
  }

  /// Appends a record whose fields are made only when a file needs its line or somebody reads
  /// the log: the SOCKS loops log every stream, and building its dictionary of strings (the
  /// request, the peer, the outcome) cost them a quarter of their user time per connection
  /// (0.028-0.040 ms fell to 0.020-0.026) for records nobody read.
  public func record(
    _ event: String, time: Double, deferred make: @escaping @Sendable () -> [String: EventLogValue]
  ) {
    append(
      path == nil
        ? .deferred(event: event, time: time, make: make) : .fields(Self.stamp(make(), event, time))
    )
  }

  private func append(_ entry: Entry) {
    // Only a file needs the line; encoding is the costly part of a record, paid on the
    // listener's event loop for every stream.
    var line: Data?
    var time: EventLogValue?
    if path != nil, case .fields(let record) = entry {
      line = (try? encoder.encode(record)).map { $0 + Data("\n".utf8) }
      time = record["time"]
    }
    lock.withLock {
      if ring.count < memoryLimit {
        ring.append(entry)
      } else {
        ring[ringStart] = entry
        ringStart = (ringStart + 1) % memoryLimit
      }
      if let line { write(line, time: time) }
    }
  }

  /// Writes one line, rotating first when it would pass the limit. Called under the lock.
  private func write(_ line: Data, time: EventLogValue?) {
    guard let path, let current = file else { return }
    if fileBytes + line.count > fileLimit, fileBytes > 0 {
      try? current.close()
      file = nil
      let older = path + ".1"
      _ = unlink(older)
      guard rename(path, older) == 0, let fresh = try? Self.create(path) else { return }
      file = fresh
      fileBytes = 0
      rotations += 1
      var note: [String: EventLogValue] = [
        "event": .string("log_rotated"), "previous": .string(older),
        "rotations": .int(rotations),
      ]
      note["time"] = time
      if let noteLine = (try? encoder.encode(note)).map({ $0 + Data("\n".utf8) }) {
        try? fresh.write(contentsOf: noteLine)
        fileBytes += noteLine.count
      }
    }
    // A full disk must not crash the mock (FileHandle.write(_:) traps on an error).
    try? file?.write(contentsOf: line)
    fileBytes += line.count
  }

  /// The same with text fields, the shape the control port's log hook hands over.
  public func record(_ event: String, time: Double, strings fields: [String: String]) {
    record(event, time: time, fields.mapValues { EventLogValue.string($0) })
  }

  /// Records kept in memory, oldest first. Deferred records are made here, once: each is
  /// kept made, so a reader polling the log pays for a record only the first time.
  public var events: [[String: EventLogValue]] {
    lock.withLock {
      var records: [[String: EventLogValue]] = []
      records.reserveCapacity(ring.count)
      for index in Array(ringStart..<ring.count) + Array(0..<ringStart) {
        let fields = ring[index].fields
        if case .deferred = ring[index] { ring[index] = .fields(fields) }
        records.append(fields)
      }
      return records
    }
  }

  /// Records of one kind.
  public func events(_ kind: String) -> [[String: EventLogValue]] {
    events.filter { $0["event"] == .string(kind) }
  }
}
