/// Hand-written argument parsing (no packages can be fetched here): a command declares its
/// options, and parsing yields values or a ``UsageError`` that names the argument at fault.
public struct OptionSpec: Sendable {
  public enum Kind: Sendable {
    /// `--flag`, no value.
    case flag
    /// `--name VALUE` or `--name=VALUE`, at most once.
    case single
    /// `--name VALUE`, any number of times.
    case repeated
  }

  /// What the value is, for completion: stated with the option, never guessed from its name.
  public enum Values: Sendable, Equatable {
    /// One of these words.
    case words([String])
    case directory
    case file
    /// Free text (a number, an address, a name).
    case text
  }

  public let name: String
  public let kind: Kind
  public let valueName: String
  public let help: String
  public let values: Values

  public init(
    _ name: String, _ kind: Kind, valueName: String = "VALUE", help: String,
    values: Values = .text
  ) {
    self.name = name
    self.kind = kind
    self.valueName = valueName
    self.help = help
    self.values = values
  }
}

public struct UsageError: Error, CustomStringConvertible, Equatable, Sendable {
  public let message: String
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}

public struct ParsedArguments: Equatable, Sendable {
  public var flags: Set<String> = []
  public var values: [String: [String]] = [:]
  public var positional: [String] = []
  /// Everything after a bare `--`, untouched (the command to run, for `exec`).
  public var trailing: [String] = []

  public func has(_ flag: String) -> Bool { flags.contains(flag) }
  public func value(_ name: String) -> String? { values[name]?.last }
  public func all(_ name: String) -> [String] { values[name] ?? [] }

  /// Parses an option's value as an integer in `range`, naming the option when it is not.
  public func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
    guard let text = value(name) else { return nil }
    guard let number = Int(text), range.contains(number) else {
      throw UsageError(
        "--\(name): expected an integer in \(range.lowerBound)...\(range.upperBound), got '\(text)'"
      )
    }
    return number
  }

  /// The longest time any option accepts (a day): beyond it a duration converted to
  /// nanoseconds or a deadline overflows, and no run here lasts that long.
  public static let maximumSeconds: Double = 86_400

  /// Parses an option's value as a number of seconds in `range` (0 to a day by default), so a
  /// value like 1e11 is a usage error before anything is built, not an overflow later.
  public func seconds(_ name: String, in range: ClosedRange<Double> = 0...maximumSeconds) throws
    -> Double?
  {
    guard let text = value(name) else { return nil }
    return try Self.number(text, option: name, in: range, what: "a number of seconds")
  }

  /// Parses `text` (the value of `--option`) as a finite number in `range`.
  public static func number(
    _ text: String, option: String, in range: ClosedRange<Double>, what: String = "a number"
  ) throws -> Double {
    guard let number = Double(text), number.isFinite, range.contains(number) else {
      throw UsageError(
        "--\(option): expected \(what) from \(format(range.lowerBound)) to "
          + "\(format(range.upperBound)), got '\(text)'")
    }
    return number
  }

  private static func format(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
  }
}

public enum ArgumentParser {
  public static func parse(_ arguments: [String], options: [OptionSpec]) throws -> ParsedArguments {
    var result = ParsedArguments()
    let byName = Dictionary(options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "--" {
        result.trailing = Array(arguments[index...])
        break
      }
      // A one-letter option is spelled -x (e.g. -o FILE).
      if argument.count == 2, argument.hasPrefix("-"), argument != "--",
        let spec = byName[String(argument.dropFirst())], spec.kind != .flag
      {
        guard index < arguments.count else {
          throw UsageError("\(argument) needs a value (\(spec.valueName))")
        }
        if spec.kind == .single, result.values[spec.name] != nil {
          throw UsageError("\(argument) given twice")
        }
        result.values[spec.name, default: []].append(arguments[index])
        index += 1
        continue
      }
      guard argument.hasPrefix("--"), argument.count > 2 else {
        if argument.hasPrefix("-") && argument != "-" {
          throw UsageError("unknown option '\(argument)' (options are spelled --name)")
        }
        result.positional.append(argument)
        continue
      }
      var name = String(argument.dropFirst(2))
      var inlineValue: String?
      if let equals = name.firstIndex(of: "=") {
        inlineValue = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      guard let spec = byName[name] else {
        throw UsageError("unknown option '--\(name)'")
      }
      switch spec.kind {
      case .flag:
        if inlineValue != nil { throw UsageError("--\(name) takes no value") }
        result.flags.insert(name)
      case .single, .repeated:
        let value: String
        if let inlineValue {
          value = inlineValue
        } else {
          guard index < arguments.count else {
            throw UsageError("--\(name) needs a value (\(spec.valueName))")
          }
          value = arguments[index]
          index += 1
        }
        if spec.kind == .single, result.values[name] != nil {
          throw UsageError("--\(name) given twice")
        }
        result.values[name, default: []].append(value)
      }
    }
    return result
  }
}
