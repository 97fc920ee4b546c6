/// Why a scenario file was rejected: the file, the JSON path of the field at fault, and what
/// was expected, e.g. `Scenarios/x.json: expect[2].by: expected a number of seconds, got "soon"`.
public struct ScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
  public let file: String
  /// A JSON path such as `app.actions[3].at`; empty for the file as a whole.
  public let path: String
  public let message: String

  public init(file: String, path: String, message: String) {
    self.file = file
    self.path = path
    self.message = message
  }

  public var description: String {
    path.isEmpty ? "\(file): \(message)" : "\(file): \(path): \(message)"
  }
}
