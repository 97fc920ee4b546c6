/// One integer field of a stream fault in a scenario file (`ms`, `afterBytes`, `reply`): what
/// its value is, the values it takes, and whether a file must write it.
public struct StreamFaultParameter: Sendable, Hashable {
  public enum Requirement: Sendable, Hashable {
    case required
    /// The value the fault takes when the file leaves the field out.
    case optional(default: Int)
  }

  /// Its name in the scenario file.
  public let field: String
  /// What the value is, for errors, the schema and the guide ("a delay in milliseconds").
  public let meaning: String
  /// The values taken: one range, or several where the mock accepts only some (reply codes).
  public let ranges: [ClosedRange<Int>]
  public let requirement: Requirement

  public init(
    _ field: String, _ meaning: String, in ranges: [ClosedRange<Int>],
    _ requirement: Requirement = .required
  ) {
    self.field = field
    self.meaning = meaning
    self.ranges = ranges
    self.requirement = requirement
  }

  public var isRequired: Bool { requirement == .required }

  /// The value used when the field is left out (nil when it must be written).
  public var defaultValue: Int? {
    if case .optional(let value) = requirement { return value }
    return nil
  }

  public func accepts(_ value: Int) -> Bool { ranges.contains { $0.contains(value) } }

  /// The same field, required or not: kinds share a field's meaning, not always its rule.
  public func with(_ requirement: Requirement) -> StreamFaultParameter {
    StreamFaultParameter(field, meaning, in: ranges, requirement)
  }
}
