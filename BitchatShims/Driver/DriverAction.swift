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
      // The project's list of verbs, generated into DriverVerbs.swift.
      guard driverVerbs.contains(where: { $0.name == name }) else {
        throw DriverError("\(file):\(line): unknown action '\(name)' for bitchat-source")
      }
      return DriverAction(at: (object["at"] as? NSNumber)?.doubleValue, name: name, fields: object)
    }
  }

  /// The verb's field (DriverVerbs.swift) as text, its fallback when absent.
  var argument: String? {
    guard let verb = driverVerbs.first(where: { $0.name == name }), let field = verb.field
    else { return nil }
    if let text = fields[field] as? String { return text }
    if let number = fields[field] as? NSNumber { return "\(number.doubleValue)" }
    return verb.fallback
  }
}

struct DriverError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
