import Foundation
import Scenarios

/// Which lanes a run takes (`--lane`): the mock lane, the real-Tor lane, or both.
public enum LaneSelection: String, Sendable, CaseIterable {
  case mock
  case real
  case all

  /// Parses `--lane`, with the error naming the option and the choices.
  public init(option text: String) throws(LaneSelectionError) {
    guard let selection = Self(rawValue: text) else {
      throw LaneSelectionError(
        "--lane: expected "
          + Self.allCases.map(\.rawValue).joined(separator: ", ").replacingLast(", ", " or ")
          + ", got '\(text)'")
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

extension String {
  /// The last `separator` replaced: "a, b, c" to "a, b or c".
  fileprivate func replacingLast(_ separator: String, _ replacement: String) -> String {
    guard let range = range(of: separator, options: .backwards) else { return self }
    return replacingCharacters(in: range, with: replacement)
  }
}
