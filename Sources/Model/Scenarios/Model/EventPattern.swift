/// An event as written in an `events-in-order` expectation: a name, optionally followed by
/// `key=value` pairs that the event's fields must carry ("proxy-mode useTor=false").
public struct EventPattern: Sendable, Equatable, CustomStringConvertible {
  public var name: String
  public var fields: [(key: String, value: String)]

  public init(_ text: String) {
    let words = text.split(separator: " ").map(String.init)
    name = words.first ?? ""
    fields = words.dropFirst().map { word in
      guard let eq = word.firstIndex(of: "=") else { return (word, "true") }
      return (String(word[..<eq]), String(word[word.index(after: eq)...]))
    }
  }

  public static func == (lhs: EventPattern, rhs: EventPattern) -> Bool {
    lhs.description == rhs.description
  }

  public func matches(_ event: ScenarioEvent) -> Bool {
    event.name == name && fields.allSatisfy { event.fields[$0.key] == $0.value }
  }

  public var description: String {
    ([name] + fields.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
  }
}
