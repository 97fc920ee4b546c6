import Scenarios

/// Which lanes a run takes (`--lane`): the mock lane, the real-Tor lane, or both.
public enum LaneSelection: String, Sendable, CaseIterable {
  case mock
  case real
  case all

  /// Parses `--lane`, with the error naming the option and the choices.
  public init(option text: String) throws(LaneSelectionError) {
    guard let selection = Self(rawValue: text) else {
      let names = Self.allCases.map(\.rawValue)
      throw LaneSelectionError(
        "--lane: expected \(names.dropLast().joined(separator: ", ")) or \(names.last!), "
          + "got '\(text)'")
    }
    self = selection
  }

  /// "mock|real|all", for usage lines and completion.
  public static var choices: String { allCases.map(\.rawValue).joined(separator: "|") }

  public func includes(_ lane: Scenarios.Lane) -> Bool {
    switch (self, lane) {
    case (.all, _), (.mock, .mock), (.real, .realTor): return true
    case (.mock, .realTor), (.real, .mock): return false
    }
  }
}

public struct LaneSelectionError: Error, CustomStringConvertible, Sendable {
  public let description: String
  init(_ description: String) { self.description = description }
}
