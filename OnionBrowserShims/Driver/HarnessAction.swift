import Foundation

/// One line of the actions file (docs/app-driver.md): `at`, `action` and its field.
struct HarnessAction {
  let at: Double?
  let name: String
  let url: String?
  let status: String?
  let seconds: Double?

  /// The verbs Onion Browser's delegates answer (DriverVerbs.swift, generated from the
  /// project's list); others are refused by name.
  static let verbs = Set(harnessVerbs.map(\.name))

  static func parse(_ text: String, file: String) throws -> [HarnessAction] {
    var actions: [HarnessAction] = []
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
      .enumerated()
    {
      let body = line.trimmingCharacters(in: .whitespaces)
      if body.isEmpty || body.hasPrefix("#") { continue }
      guard
        let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
      else { throw HarnessError("\(file):\(index + 1): not a JSON object") }
      guard let name = object["action"] as? String else {
        throw HarnessError("\(file):\(index + 1): missing field 'action'")
      }
      guard verbs.contains(name) else {
        throw HarnessError(
          "\(file):\(index + 1): action '\(name)' has no Onion Browser counterpart "
            + "(onion-browser-source takes \(verbs.sorted().joined(separator: ", ")))")
      }
      actions.append(
        HarnessAction(
          at: (object["at"] as? NSNumber)?.doubleValue, name: name, url: object["url"] as? String,
          status: object["status"] as? String,
          seconds: (object["seconds"] as? NSNumber)?.doubleValue))
    }
    return actions
  }
}

struct HarnessError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
