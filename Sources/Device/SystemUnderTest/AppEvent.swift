import FailClosedSupport
import Foundation

/// One line of the app driver's output: what happened, at which virtual time. This file is the
/// event format (docs/app-driver.md describes it); the scenario runner parses these lines.
///
/// A line is a flat JSON object: `t` (virtual seconds since the app started, or with `--epoch`
/// since the run's time 0, negative for what the app logs while it sets up; 3 decimals),
/// `type` (one of ``Kind``), then the kind's fields in key order, for example
/// `{"t":75.000,"type":"notification","name":"TorBootstrapDidStall"}`.
public struct AppEvent: Sendable, Equatable {
  public enum Kind: String, Sendable, CaseIterable {
    /// A published property changed: `component`, `field`, `value`.
    case state
    /// A notification was posted: `name`, optional `enabled` (TorUserPreferenceChanged).
    case notification
    /// A socket was opened: `endpoint` (host:port actually connected), `transport`
    /// (tor|direct|naive|probe|control), `purpose`.
    case socket
    /// A request started or finished: `url`, `via` (tor|direct|naive), `phase`
    /// (start|done|failed), optional `status`, `error`.
    case request
    /// The driver executed an action: `action`, optional `argument`.
    case action
    /// A relay's lifecycle: `relay`, `phase` (queued|connecting|connected|disconnected|
    /// failed|permanent|backoff), optional `delay`, `error`.
    case relay
    /// A message send: `phase` (queued|sent|dropped|failed), `id`, optional `relay`.
    case message
    /// The geo relay directory: `phase` (loaded|fetch|skipped|refreshed|rejected|retry),
    /// optional `source`, `count`, `delay`, `reason`.
    case directory
    /// Something went wrong in the driver: `message`.
    case error
    /// What a control-port Tor client reported or was told (the C tor backends): `phase`
    /// (bootstrap|problem|command|reply-timeout|process), optional `progress`, `tag`,
    /// `summary`, `reason`, `count` (problems), `command` (what the controller sent),
    /// `detail`.
    case tor
  }

  public let time: Double
  public let kind: Kind
  public let fields: [String: EventValue]

  public init(time: Double, kind: Kind, fields: [String: EventValue]) {
    self.time = time
    self.kind = kind
    self.fields = fields
  }

  public subscript(_ key: String) -> EventValue? { fields[key] }

  /// The JSON line, keys `t`, `type`, then the fields in sorted order.
  public var jsonLine: String {
    var parts = ["\"t\":" + String(format: "%.3f", time), "\"type\":\"\(kind.rawValue)\""]
    for key in fields.keys.sorted() {
      parts.append(JSONText.quote(key) + ":" + fields[key]!.json)
    }
    return "{" + parts.joined(separator: ",") + "}"
  }

  /// Parses a line written by ``jsonLine`` (or any flat JSON object with `t` and `type`).
  public init(jsonLine: String) throws {
    guard let data = jsonLine.data(using: .utf8),
      let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { throw AppEventParseError("not a JSON object: \(jsonLine.prefix(80))") }
    guard let time = (object["t"] as? NSNumber)?.doubleValue else {
      throw AppEventParseError("field 't' missing or not a number")
    }
    guard let typeText = object["type"] as? String, let kind = Kind(rawValue: typeText) else {
      throw AppEventParseError("field 'type' missing or unknown")
    }
    var fields: [String: EventValue] = [:]
    for (key, value) in object where key != "t" && key != "type" {
      fields[key] = EventValue(any: value)
    }
    self.init(time: time, kind: kind, fields: fields)
  }
}

public struct AppEventParseError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// A field value in an ``AppEvent``.
public enum EventValue: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral,
  ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral
{
  case string(String)
  case int(Int)
  case double(Double)
  case bool(Bool)

  public init(stringLiteral value: String) { self = .string(value) }
  public init(integerLiteral value: Int) { self = .int(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(floatLiteral value: Double) { self = .double(value) }

  init(any value: Any) {
    if let number = value as? NSNumber {
      // JSONSerialization's booleans are NSNumbers of ObjC type "c".
      let objCType = String(cString: number.objCType)
      if objCType == "c" {
        self = .bool(number.boolValue)
      } else if objCType == "d" || objCType == "f" {
        self = .double(number.doubleValue)
      } else {
        self = .int(number.intValue)
      }
    } else {
      self = .string("\(value)")
    }
  }

  public var json: String {
    switch self {
    case .string(let text): return JSONText.quote(text)
    case .int(let value): return String(value)
    case .double(let value): return value.isFinite ? String(format: "%.3f", value) : "null"
    case .bool(let value): return value ? "true" : "false"
    }
  }

  public var description: String {
    switch self {
    case .string(let text): return text
    case .int(let value): return String(value)
    case .double(let value): return String(value)
    case .bool(let value): return String(value)
    }
  }
}
