/// Header fields in order, with case-insensitive lookup (names keep their spelling on the wire).
public struct HTTPHeaders: Equatable, Sendable, ExpressibleByDictionaryLiteral, Sequence {
  public private(set) var fields: [(name: String, value: String)]

  public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

  public init(dictionaryLiteral elements: (String, String)...) {
    fields = elements.map { (name: $0.0, value: $0.1) }
  }

  public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
    lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
  }

  public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
    fields.makeIterator()
  }

  public var count: Int { fields.count }

  /// The first value of `name`, compared case-insensitively.
  public subscript(name: String) -> String? {
    let lowered = name.lowercased()
    return fields.first { $0.name.lowercased() == lowered }?.value
  }

  public func values(for name: String) -> [String] {
    let lowered = name.lowercased()
    return fields.filter { $0.name.lowercased() == lowered }.map(\.value)
  }

  /// The comma-separated tokens of every `name` field, lowercased ("Connection: keep-alive,
  /// Upgrade" gives ["keep-alive", "upgrade"]).
  public func tokens(for name: String) -> [String] {
    values(for: name).flatMap { $0.split(separator: ",") }
      .map { $0.trimmingSpaces().lowercased() }.filter { !$0.isEmpty }
  }

  public func contains(_ name: String) -> Bool { self[name] != nil }

  public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

  /// Replaces every `name` field with one.
  public mutating func set(_ name: String, _ value: String) {
    remove(name)
    add(name, value)
  }

  public mutating func remove(_ name: String) {
    let lowered = name.lowercased()
    fields.removeAll { $0.name.lowercased() == lowered }
  }
}

extension StringProtocol {
  func trimmingSpaces() -> String {
    var scalars = Substring(self).unicodeScalars[...]
    while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
    while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
    return String(String.UnicodeScalarView(scalars))
  }
}
