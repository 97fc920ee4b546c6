/// One kind of expectation, whole: its name and fields as scenario files write them, how it is
/// read, how it is judged and the sentence reports show. Every kind is listed once, in
/// ``ExpectationKinds/all``: the parser and the judge both go through that list, so a kind is
/// parsed and judged by the same unit or not at all (a test holds the list against
/// Scenarios/scenario.schema.json).
public protocol ExpectationUnit: Sendable, Equatable {
  /// The kind as written in scenario files ("no-leak").
  static var name: String { get }
  /// Its own fields, besides `kind` and `because`.
  static var fields: [String] { get }
  /// Judged from Debian's tor and the private network: real-Tor lane only.
  static var realTorOnly: Bool { get }
  /// Reads the kind's fields (unknown fields are already rejected).
  static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self
  /// Met, failed or undecided, with the reason a reviewer reads ("posted at 75.2 s").
  func judge(_ facts: ExpectationFacts) -> ExpectationCheck
  /// A plain sentence for reports: "TorBootstrapDidStall posted by 75 s".
  var sentence: String { get }
}

extension ExpectationUnit {
  public static var fields: [String] { [] }
  public static var realTorOnly: Bool { false }

  func isEqual(to other: any ExpectationUnit) -> Bool { (other as? Self) == self }
}

/// One expectation's judgement before it is filed as an ``ExpectationResult``.
public typealias ExpectationCheck = (status: ExpectationStatus, reason: String)
