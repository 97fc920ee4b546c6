/// The faults applied to the streams of one destination: toxics, spelled comma-separated as
/// in "latency=200,bandwidth=64" or "reply=0xf2". A toxic named twice keeps the last value.
public struct StreamToxics: Sendable, Equatable, CustomStringConvertible {
  /// Every toxic the mock knows, in the order a spec is written back and answers are taken
  /// (a reply before a blackhole).
  public static let registered: [ToxicKind] = [
    ToxicKind(ReplyToxic.self), ToxicKind(LatencyToxic.self), ToxicKind(BandwidthToxic.self),
    ToxicKind(ResetPeerToxic.self), ToxicKind(BlackholeToxic.self), ToxicKind(SlowCloseToxic.self),
  ]

  public private(set) var toxics: [any StreamToxic]

  public init(_ toxics: [any StreamToxic] = []) {
    self.toxics = []
    for toxic in toxics { add(toxic) }
  }

  public init(parsing spec: String) throws(MockTorError) {
    guard !spec.isEmpty else { throw MockTorError.badFault(spec: spec, reason: "empty") }
    var parsed: [any StreamToxic] = []
    for text in spec.split(separator: ",", omittingEmptySubsequences: false) {
      let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
      let name = parts.first?.lowercased() ?? ""
      let value = parts.count > 1 ? parts[1] : nil
      switch Self.parseToxic(name: name, value: value) {
      case .success(let toxic): parsed.append(toxic)
      case .failure(let error): throw MockTorError.badFault(spec: spec, reason: error.reason)
      }
    }
    self.init(parsed)
  }

  private static func parseToxic(name: String, value: String?) -> Result<
    any StreamToxic, ToxicValueError
  > {
    guard let kind = kind(named: name) else {
      let names = registered.map(\.name).joined(separator: ", ")
      let text = name + (value.map { "=" + $0 } ?? "")
      return .failure(ToxicValueError("unknown toxic '\(text)' (use \(names))"))
    }
    return kind.parse(value: value, name: name)
  }

  /// The registered toxic with this name or alias.
  public static func kind(named name: String) -> ToxicKind? {
    registered.first { $0.name == name || $0.aliases.contains(name) }
  }

  /// The toxics' lines for `--help`: "latency=MS  delay the reply ...".
  public static var usage: [String] {
    registered.map { kind in
      let value = kind.valueName.map { kind.valueIsOptional ? "[=\($0)]" : "=" + $0 } ?? ""
      let spelling = kind.name + value
      let aliases = kind.aliases.isEmpty ? "" : " (also \(kind.aliases.joined(separator: ", ")))"
      return spelling + String(repeating: " ", count: max(2, 20 - spelling.count)) + kind.summary
        + aliases
    }
  }

  /// Adds a toxic, replacing one of the same kind.
  public mutating func add(_ toxic: any StreamToxic) {
    let kind = toxic.toxicName
    toxics.removeAll { $0.toxicName == kind }
    let rank = { (t: any StreamToxic) in
      Self.registered.firstIndex { $0.name == t.toxicName } ?? Self.registered.count
    }
    toxics.append(toxic)
    toxics.sort { rank($0) < rank($1) }
  }

  public var isEmpty: Bool { toxics.isEmpty }

  // What the relay asks, every toxic at once.

  var delayBeforeAnswer: Double { toxics.map(\.delayBeforeAnswer).reduce(0, +) }
  var answer: ToxicAnswer? { toxics.lazy.compactMap(\.answer).first }

  func readLimit(_ direction: StreamDirection) -> Int? {
    toxics.compactMap { $0.readLimit(direction) }.min()
  }

  func resets(after flowed: Int) -> Bool { toxics.contains { $0.resets(after: flowed) } }
  func silences(after flowed: Int) -> Bool { toxics.contains { $0.silences(after: flowed) } }

  func delay(before count: Int, _ direction: StreamDirection) -> Double {
    toxics.map { $0.delay(before: count, direction) }.reduce(0, +)
  }

  func delay(after count: Int, _ direction: StreamDirection) -> Double {
    toxics.map { $0.delay(after: count, direction) }.reduce(0, +)
  }

  func delayBeforeClosing(_ direction: StreamDirection) -> Double {
    toxics.map { $0.delayBeforeClosing(direction) }.reduce(0, +)
  }

  public var description: String { toxics.map(\.description).joined(separator: ",") }

  /// Equal when written the same way (each toxic's spelling carries all its values).
  public static func == (lhs: StreamToxics, rhs: StreamToxics) -> Bool {
    lhs.description == rhs.description
  }
}
