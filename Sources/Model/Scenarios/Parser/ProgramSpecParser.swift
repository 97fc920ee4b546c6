import Foundation

/// Reads a ``ProgramSpec``: a scenario's `app.program`, or a whole `--app-profile FILE`. The
/// same fields in both places:
///
///     {"argv": ["curl", "--socks5-hostname", "127.0.0.1:39050", "http://web.example/"],
///      "env": {"NAME": "value"}, "cwd": "/tmp", "tor": "ctor", "start": "with-tor",
///      "success": {"exit": 0, "output": "regex", "file": "/tmp/out"}}
///
/// Only `argv` is required (a profile file given with `--app -- CMD` may leave it out: the
/// command line's comes instead).
public enum ProgramSpecParser {
  public static let fields = ["argv", "env", "cwd", "tor", "start", "success", "note"]

  /// A `--app-profile FILE`'s text; `command` (from `--app -- CMD`) replaces its argv.
  public static func parse(_ text: String, file: String, command: [String]? = nil)
    throws(ScenarioError) -> ProgramSpec
  {
    let root: JSONValue
    do {
      root = try JSONParser.parse(text)
    } catch {
      throw ScenarioError(file: file, path: "", message: "not valid JSON: \(error)")
    }
    return try read(FieldReader(root, file: file, path: ""), command: command)
  }

  static func read(_ r: FieldReader, command: [String]? = nil) throws(ScenarioError)
    -> ProgramSpec
  {
    try r.rejectUnknown(allowing: fields)
    var arguments: [String] = []
    if let argv = try r.array("argv", required: command == nil, minCount: 1, "arguments") {
      for element in argv {
        guard case .string(let word) = element.value else {
          throw ScenarioError(
            file: r.file, path: element.path,
            message: "expected a string, got \(element.value.shortDescription)")
        }
        arguments.append(word)
      }
    }
    if let command { arguments = command }
    guard let program = arguments.first, !program.isEmpty else {
      throw r.fail("argv", "the program's name is empty")
    }
    var environment: [String: String] = [:]
    if case .object(let members)? = r.value("env") {
      for member in members {
        guard case .string(let value) = member.value else {
          throw r.fail(
            "env",
            "\(member.key): expected a string value, got \(member.value.shortDescription)")
        }
        guard !member.key.isEmpty, !member.key.contains("=") else {
          throw r.fail("env", "'\(member.key)' is not a variable name")
        }
        environment[member.key] = value
      }
    } else if let other = r.value("env") {
      throw r.fail("env", "expected an object of names and values, got \(other.shortDescription)")
    }
    let tor =
      try r.oneOf("tor", ProgramSpec.Tor.allCases.map(\.rawValue), required: false)
      .map { ProgramSpec.Tor(rawValue: $0)! } ?? .ctor
    let start =
      try r.oneOf("start", ProgramSpec.Start.allCases.map(\.rawValue), required: false)
      .map { ProgramSpec.Start(rawValue: $0)! } ?? .withTor
    var success = ProgramSpec.Success()
    if let s = try r.object("success") {
      try s.rejectUnknown(allowing: ["exit", "output", "file"])
      success = try Self.success(s) ?? success
    }
    _ = try r.string("note", required: false)
    return ProgramSpec(
      arguments: arguments, environment: environment,
      workingDirectory: try r.string("cwd", required: false), tor: tor, start: start,
      success: success)
  }

  /// A success's parts (`exit`, `output` REGEX, `file`) where `r` has them; nil when it has
  /// none. The profile's `success` object and a `program-succeeds` expectation both read it.
  static func success(_ r: FieldReader) throws(ScenarioError) -> ProgramSpec.Success? {
    let exit = try r.integer("exit", in: 0...255, "an exit status")
    let output = try r.string("output", required: false)
    let file = try r.string("file", required: false)
    // Compiled here, once: the checks of a run match with this one.
    var pattern: CompiledPattern?
    if let output {
      guard let compiled = CompiledPattern(output) else {
        throw r.fail("output", "'\(output)' is not a regular expression")
      }
      pattern = compiled
    }
    guard exit != nil || output != nil || file != nil else { return nil }
    return ProgramSpec.Success(exit: exit, outputPattern: pattern, file: file)
  }
}
