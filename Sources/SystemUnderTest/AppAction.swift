import FailClosedSupport
import Foundation

/// One timed step of an app run: the action format `failclosed app --actions` reads
/// (docs/app-driver.md). A file is JSON lines (one object per line; blank lines and lines
/// starting with # are skipped) or one JSON array of the same objects. Each object has
/// `action` and optionally `at` (virtual seconds since launch; the driver waits until then)
/// plus the action's argument:
///
///     {"at": 0, "action": "start"}
///     {"action": "wait", "seconds": 80}
///     {"at": 90, "action": "set-preference", "value": "off"}
///     {"action": "add-relay", "url": "wss://relay.example"}
///     {"action": "send-message", "text": "hello"}
///     {"action": "path-change", "status": "unsatisfied"}
///     {"at": 3, "action": "open-url", "url": "onionbrowser://example.com/"}
public struct AppAction: Sendable, Equatable {
  public enum Kind: Sendable, Equatable {
    case start
    case foreground
    case background
    case setPreference(Bool)
    case revokeActivation
    case grantActivation
    /// An NWPathMonitor update; `satisfied` false is an unsatisfied path.
    case pathChange(satisfied: Bool)
    case addRelay(String)
    case sendMessage(String)
    case refreshDirectory
    /// An incoming app URL (that Onion Browser version's URL schemes; onion-browser-N only).
    case openURL(String)
    case wait(Double)

    public var name: String {
      switch self {
      case .start: return "start"
      case .foreground: return "foreground"
      case .background: return "background"
      case .setPreference: return "set-preference"
      case .revokeActivation: return "revoke-activation"
      case .grantActivation: return "grant-activation"
      case .pathChange: return "path-change"
      case .addRelay: return "add-relay"
      case .sendMessage: return "send-message"
      case .refreshDirectory: return "refresh-directory"
      case .openURL: return "open-url"
      case .wait: return "wait"
      }
    }

    public var argument: String? {
      switch self {
      case .setPreference(let on): return on ? "on" : "off"
      case .pathChange(let satisfied): return satisfied ? "satisfied" : "unsatisfied"
      case .addRelay(let url): return url
      case .sendMessage(let text): return text
      case .openURL(let url): return url
      case .wait(let seconds): return String(seconds)
      default: return nil
      }
    }
  }

  public var at: Double?
  public var kind: Kind

  public init(at: Double? = nil, _ kind: Kind) {
    self.at = at
    self.kind = kind
  }

  /// The action as one line of an actions file, the inverse of ``parseFile(_:name:)``:
  /// `{"at": 20, "action": "set-preference", "value": "off"}`. The scenario runner writes its
  /// actions files with this, so the format lives in this one file.
  public var jsonLine: String {
    var parts: [String] = []
    if let at { parts.append("\"at\": " + Self.number(at)) }
    parts.append("\"action\": " + JSONText.quote(kind.name))
    switch kind {
    case .setPreference(let on): parts.append("\"value\": " + JSONText.quote(on ? "on" : "off"))
    case .pathChange(let satisfied):
      parts.append("\"status\": " + JSONText.quote(satisfied ? "satisfied" : "unsatisfied"))
    case .addRelay(let url), .openURL(let url): parts.append("\"url\": " + JSONText.quote(url))
    case .sendMessage(let text): parts.append("\"text\": " + JSONText.quote(text))
    case .wait(let seconds): parts.append("\"seconds\": " + Self.number(seconds))
    case .start, .foreground, .background, .revokeActivation, .grantActivation,
      .refreshDirectory:
      break
    }
    return "{" + parts.joined(separator: ", ") + "}"
  }

  /// Whole seconds without a fraction ("20"), others as Swift prints them ("0.5").
  static func number(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
  }

  /// Parses an actions file; errors name the file, line and field.
  public static func parseFile(_ text: String, name: String) throws -> [AppAction] {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    if trimmed.hasPrefix("[") {
      guard let array = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [Any] else {
        throw AppActionError("\(name): not a JSON array of action objects")
      }
      return try array.enumerated().map { index, element in
        guard let object = element as? [String: Any] else {
          throw AppActionError("\(name): element \(index): not an object")
        }
        return try parse(object, place: "\(name): element \(index)")
      }
    }
    var actions: [AppAction] = []
    for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false)
      .enumerated()
    {
      let line = rawLine.trimmingCharacters(in: .whitespaces)
      if line.isEmpty || line.hasPrefix("#") { continue }
      let place = "\(name):\(index + 1)"
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      else { throw AppActionError("\(place): not a JSON object") }
      actions.append(try parse(object, place: place))
    }
    return actions
  }

  static func parse(_ object: [String: Any], place: String) throws -> AppAction {
    guard let name = object["action"] as? String else {
      throw AppActionError("\(place): field 'action' missing or not a string")
    }
    var at: Double?
    if let value = object["at"] {
      guard let number = (value as? NSNumber)?.doubleValue, number >= 0, number.isFinite else {
        throw AppActionError("\(place): field 'at' must be a number of seconds >= 0")
      }
      at = number
    }
    func string(_ field: String) throws -> String {
      guard let value = object[field] as? String, !value.isEmpty else {
        throw AppActionError("\(place): action '\(name)' needs a string field '\(field)'")
      }
      return value
    }
    let kind: Kind
    switch name {
    case "start": kind = .start
    case "foreground": kind = .foreground
    case "background": kind = .background
    case "set-preference":
      switch try string("value") {
      case "on": kind = .setPreference(true)
      case "off": kind = .setPreference(false)
      case let other:
        throw AppActionError("\(place): field 'value' must be 'on' or 'off', got '\(other)'")
      }
    case "revoke-activation": kind = .revokeActivation
    case "grant-activation": kind = .grantActivation
    case "path-change":
      let status = object["status"] as? String ?? "satisfied"
      guard status == "satisfied" || status == "unsatisfied" else {
        throw AppActionError("\(place): field 'status' must be 'satisfied' or 'unsatisfied'")
      }
      kind = .pathChange(satisfied: status == "satisfied")
    case "add-relay": kind = .addRelay(try string("url"))
    case "send-message": kind = .sendMessage(try string("text"))
    case "refresh-directory": kind = .refreshDirectory
    case "open-url": kind = .openURL(try string("url"))
    case "wait":
      guard let seconds = (object["seconds"] as? NSNumber)?.doubleValue, seconds >= 0,
        seconds.isFinite
      else { throw AppActionError("\(place): action 'wait' needs a number field 'seconds' >= 0") }
      kind = .wait(seconds)
    default:
      throw AppActionError(
        "\(place): unknown action '\(name)' (start, foreground, background, set-preference, "
          + "revoke-activation, grant-activation, path-change, add-relay, send-message, "
          + "refresh-directory, open-url, wait)")
    }
    return AppAction(at: at, kind)
  }
}

public struct AppActionError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}
