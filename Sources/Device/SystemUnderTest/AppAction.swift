import FailClosedSupport
import Foundation
import Vocabulary

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
  /// The one typed action (Vocabulary); actions files read it with
  /// ``ActionStep/init(verb:fileArgument:)``.
  public typealias Kind = ActionStep

  public var at: Double?
  public var kind: Kind

  public init(at: Double? = nil, _ kind: Kind) {
    self.at = at
    self.kind = kind
  }

  /// The action as one line of an actions file, the inverse of ``parseFile(_:name:verbs:)``:
  /// `{"at": 20, "action": "set-preference", "value": "off"}`. The scenario runner writes its
  /// actions files with this; the field comes from the verb's entry in ``ActionVerbs``.
  public func jsonLine(verbs: [ActionVerb]) -> String {
    var parts: [String] = []
    if let at { parts.append("\"at\": " + ActionValue.seconds(at).description) }
    parts.append("\"action\": " + JSONText.quote(kind.name))
    if let field = ActionVerbs.verb(named: kind.name, in: verbs)?.driverArgument?.field,
      let value = kind.fileArgument
    {
      switch value {
      case .seconds: parts.append("\"\(field)\": " + value.description)
      case .bool(let flag): parts.append("\"\(field)\": " + (flag ? "true" : "false"))
      case .text(let text): parts.append("\"\(field)\": " + JSONText.quote(text))
      }
    }
    return "{" + parts.joined(separator: ", ") + "}"
  }

  /// The line with the verbs of ``ActionVerbs/all``.
  public var jsonLine: String { jsonLine(verbs: ActionVerbs.all) }

  /// Parses an actions file; errors name the file, line and field.
  public static func parseFile(
    _ text: String, name: String, verbs: [ActionVerb] = ActionVerbs.all
  ) throws -> [AppAction] {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    if trimmed.hasPrefix("[") {
      guard let array = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [Any] else {
        throw AppActionError("\(name): not a JSON array of action objects")
      }
      return try array.enumerated().map { index, element in
        guard let object = element as? [String: Any] else {
          throw AppActionError("\(name): element \(index): not an object")
        }
        return try parse(object, place: "\(name): element \(index)", verbs: verbs)
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
      actions.append(try parse(object, place: place, verbs: verbs))
    }
    return actions
  }

  /// One object, read by its verb's entry in `verbs` (its field and the values it takes).
  static func parse(_ object: [String: Any], place: String, verbs: [ActionVerb]) throws
    -> AppAction
  {
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
    guard let verb = ActionVerbs.verb(named: name, in: verbs), verb.inActionsFiles else {
      throw AppActionError(
        "\(place): unknown action '\(name)' ("
          + ActionVerbs.actionsFileNames(in: verbs).joined(separator: ", ") + ")")
    }
    var argument: ActionValue?
    if let spec = verb.driverArgument {
      let field = spec.field
      switch spec.values {
      case .text(let fallback):
        if let value = object[field] as? String, !value.isEmpty {
          argument = .text(value)
        } else if let fallback, object[field] == nil {
          argument = .text(fallback)
        } else {
          throw AppActionError("\(place): action '\(name)' needs a string field '\(field)'")
        }
      case .choice(let words, let fallback):
        let value = object[field] as? String ?? (object[field] == nil ? fallback : nil)
        guard let value, words.contains(value) else {
          let listed = words.map { "'\($0)'" }.joined(separator: " or ")
          if fallback == nil, object[field] == nil {
            throw AppActionError("\(place): action '\(name)' needs a string field '\(field)'")
          }
          let got = (object[field] as? String).map { ", got '\($0)'" } ?? ""
          throw AppActionError("\(place): field '\(field)' must be \(listed)\(got)")
        }
        argument = .text(value)
      case .bool:
        guard let value = object[field] as? Bool else {
          throw AppActionError("\(place): action '\(name)' needs a Boolean field '\(field)'")
        }
        argument = .bool(value)
      case .seconds:
        guard let seconds = (object[field] as? NSNumber)?.doubleValue, seconds >= 0,
          seconds.isFinite
        else {
          throw AppActionError(
            "\(place): action '\(name)' needs a number field '\(field)' >= 0")
        }
        argument = .seconds(seconds)
      }
    }
    return AppAction(at: at, ActionStep(verb: name, fileArgument: argument))
  }
}

public struct AppActionError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}

extension ActionStep {
  /// The argument as the driver's `action` event records it ("off", "80.0" for a wait).
  public var eventArgument: String? {
    if case .wait(let seconds) = self { return String(seconds) }
    return fileArgument?.description
  }
}
