/// Reads the members of one JSON object with typed accessors whose errors name the field's JSON
/// path and what was expected. The rules mirror Scenarios/scenario.schema.json.
struct FieldReader {
  let file: String
  let path: String
  private let members: [(key: String, value: JSONValue)]

  init(_ value: JSONValue, file: String, path: String) throws(ScenarioError) {
    self.file = file
    self.path = path
    guard case .object(let members) = value else {
      throw ScenarioError(
        file: file, path: path, message: "expected an object, got \(value.shortDescription)")
    }
    self.members = members
  }

  func fail(_ key: String?, _ message: String) -> ScenarioError {
    ScenarioError(file: file, path: key.map { childPath($0) } ?? path, message: message)
  }

  func childPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

  func value(_ key: String) -> JSONValue? { members.first { $0.key == key }?.value }

  /// Rejects members not in `allowed`, naming the first unknown one, the closest known one
  /// ("did you mean") and the known ones. `otherSpellings` maps another vocabulary's name for
  /// a field (the app driver's `action`) to this one's (`do`).
  func rejectUnknown(allowing allowed: [String], otherSpellings: [String: String] = [:])
    throws(ScenarioError)
  {
    for member in members where !allowed.contains(member.key) {
      if let spelling = otherSpellings[member.key], allowed.contains(spelling) {
        throw fail(
          member.key,
          "unknown field: scenario files spell it \"\(spelling)\" (\"\(member.key)\" is the app "
            + "driver's name, docs/app-driver.md)")
      }
      throw fail(
        member.key,
        "unknown field" + NameSuggestion.hint(for: member.key, in: allowed)
          + " (expected one of: \(allowed.joined(separator: ", ")))")
    }
  }

  func required(_ key: String, _ what: String) throws(ScenarioError) -> JSONValue {
    guard let value = value(key) else { throw fail(nil, "missing \"\(key)\": expected \(what)") }
    return value
  }

  func string(_ key: String, required: Bool = true) throws(ScenarioError) -> String? {
    guard let value = value(key) else {
      if required { throw fail(nil, "missing \"\(key)\": expected a non-empty string") }
      return nil
    }
    guard case .string(let s) = value, !s.isEmpty else {
      throw fail(key, "expected a non-empty string, got \(value.shortDescription)")
    }
    return s
  }

  func string(
    _ key: String, matching pattern: CompiledPattern, _ what: String, required: Bool = true
  )
    throws(ScenarioError) -> String?
  {
    guard let value = value(key) else {
      if required { throw fail(nil, "missing \"\(key)\": expected \(what)") }
      return nil
    }
    guard case .string(let s) = value, pattern.matchesWhole(s) else {
      throw fail(key, "expected \(what), got \(value.shortDescription)")
    }
    return s
  }

  func oneOf(_ key: String, _ allowed: [String], required: Bool = true) throws(ScenarioError)
    -> String?
  {
    let what = "one of " + allowed.map { "\"\($0)\"" }.joined(separator: ", ")
    guard let value = value(key) else {
      if required { throw fail(nil, "missing \"\(key)\": expected \(what)") }
      return nil
    }
    guard case .string(let s) = value, allowed.contains(s) else {
      let hint: String
      if case .string(let s) = value {
        hint = NameSuggestion.hint(for: s, in: allowed)
      } else {
        hint = ""
      }
      throw fail(key, "expected \(what), got \(value.shortDescription)" + hint)
    }
    return s
  }

  func bool(_ key: String, required: Bool = false) throws(ScenarioError) -> Bool? {
    guard let value = value(key) else {
      if required { throw fail(nil, "missing \"\(key)\": expected true or false") }
      return nil
    }
    guard case .bool(let b) = value else {
      throw fail(key, "expected true or false, got \(value.shortDescription)")
    }
    return b
  }

  /// A time in virtual seconds: a number, at least 0 (or above 0 when `positive`).
  func seconds(_ key: String, required: Bool = false, positive: Bool = false, max: Double = 90_000)
    throws(ScenarioError) -> Double?
  {
    let what = positive ? "a number of seconds above 0" : "a number of seconds"
    guard let value = value(key) else {
      if required { throw fail(nil, "missing \"\(key)\": expected \(what)") }
      return nil
    }
    guard case .number(let n) = value else {
      throw fail(key, "expected \(what), got \(value.shortDescription)")
    }
    if positive ? n <= 0 : n < 0 {
      throw fail(key, "expected \(what), got \(value.shortDescription)")
    }
    if n > max {
      throw fail(key, "expected at most \(Int(max)) seconds, got \(value.shortDescription)")
    }
    return n
  }

  func integer(_ key: String, in range: ClosedRange<Int>, _ what: String, required: Bool = false)
    throws(ScenarioError) -> Int?
  {
    try integer(key, in: [range], what, required: required)
  }

  /// An integer in any of `ranges` (a SOCKS reply code: 1 to 8 or 240 to 247).
  func integer(
    _ key: String, in ranges: [ClosedRange<Int>], _ what: String, required: Bool = false
  ) throws(ScenarioError) -> Int? {
    guard let value = value(key) else {
      if required { throw fail(nil, "missing \"\(key)\": expected \(what)") }
      return nil
    }
    guard case .number(let n) = value, n.rounded() == n,
      ranges.contains(where: { n >= Double($0.lowerBound) && n <= Double($0.upperBound) })
    else {
      let allowed = ranges.map { "from \($0.lowerBound) to \($0.upperBound)" }
        .joined(separator: " or ")
      throw fail(key, "expected \(what) (an integer \(allowed)), got \(value.shortDescription)")
    }
    return Int(n)
  }

  /// The elements of an array member with each element's path.
  func array(_ key: String, required: Bool = false, minCount: Int = 0, _ what: String)
    throws(ScenarioError) -> [(path: String, value: JSONValue)]?
  {
    guard let value = value(key) else {
      if required { throw fail(nil, "missing \"\(key)\": expected an array of \(what)") }
      return nil
    }
    guard case .array(let elements) = value else {
      throw fail(key, "expected an array of \(what), got \(value.shortDescription)")
    }
    if elements.count < minCount {
      throw fail(key, "expected at least \(minCount) \(what), got \(elements.count)")
    }
    return elements.enumerated().map { ("\(childPath(key))[\($0.offset)]", $0.element) }
  }

  func object(_ key: String) throws(ScenarioError) -> FieldReader? {
    guard let value = value(key) else { return nil }
    return try FieldReader(value, file: file, path: childPath(key))
  }
}
