import Foundation

/// One line of the actions file (docs/app-driver.md), as `failclosed app` reads it.
struct DriverAction {
  let at: Double?
  let name: String
  let fields: [String: Any]

  static func parse(_ text: String, file: String) throws -> [DriverAction] {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    var objects: [(Int, [String: Any])] = []
    if trimmed.hasPrefix("[") {
      guard
        let array = try JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [[String: Any]]
      else { throw DriverError("\(file): not an array of objects") }
      objects = array.enumerated().map { ($0.offset + 1, $0.element) }
    } else {
      for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
        .enumerated()
      {
        let body = line.trimmingCharacters(in: .whitespaces)
        if body.isEmpty || body.hasPrefix("#") { continue }
        guard
          let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        else { throw DriverError("\(file):\(index + 1): not a JSON object") }
        objects.append((index + 1, object))
      }
    }
    return try objects.map { line, object in
      guard let name = object["action"] as? String else {
        throw DriverError("\(file):\(line): missing field 'action'")
      }
      let known = [
        "start", "foreground", "background", "set-preference", "revoke-activation",
        "grant-activation", "path-change", "add-relay", "send-message", "refresh-directory", "wait",
      ]
      guard known.contains(name) else {
        throw DriverError("\(file):\(line): unknown action '\(name)' for bitchat-source")
      }
      return DriverAction(at: (object["at"] as? NSNumber)?.doubleValue, name: name, fields: object)
    }
  }

  var argument: String? {
    switch name {
    case "set-preference": return fields["value"] as? String
    case "path-change": return fields["status"] as? String ?? "satisfied"
    case "add-relay": return fields["url"] as? String
    case "send-message": return fields["text"] as? String
    case "wait": return (fields["seconds"] as? NSNumber).map { "\($0.doubleValue)" }
    default: return nil
    }
  }
}

struct DriverError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
