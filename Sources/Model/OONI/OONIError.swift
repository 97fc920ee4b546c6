/// Malformed OONI input, naming the file, the line where the measurement starts (its line in a
/// JSONL file, or the syntax error's line) and the field at fault.
public struct OONIError: Error, Equatable, CustomStringConvertible, Sendable {
  public let file: String
  public let line: Int
  /// The JSON path of the field at fault, e.g. `test_keys.targets.x.failure`; empty for the
  /// whole document.
  public let field: String
  public let message: String

  public init(file: String, line: Int, field: String, message: String) {
    self.file = file
    self.line = line
    self.field = field
    self.message = message
  }

  public var description: String {
    "\(file):\(line): " + (field.isEmpty ? "" : "field '\(field)': ") + message
  }
}
