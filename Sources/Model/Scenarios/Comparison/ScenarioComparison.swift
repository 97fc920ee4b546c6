/// One scenario run on two systems under test (`leak-audit --compare A,B`), item by item: the
/// verdict, each expectation, each notification's times, the order of the milestones, the
/// relay connections, the requests, the messages sent and the leaks. Pure.
///
/// Times are "the same" within `tolerance` seconds (docs/linux-differences.md, "Time"): the
/// model runs on a scaled virtual clock whose real-time hops (the mock's bind, a process
/// start) are multiplied by the scale, and bitchat's code on the wall clock with its own
/// polls (the 1 s SOCKS probe timer, the 0.2 s readiness poll), so the two never agree to
/// the millisecond. Two milestones are in a different order when one side has them the other
/// way round and the two gaps between them differ by more than the tolerance.
public struct ScenarioComparison: Sendable, Equatable {
  public enum Status: String, Sendable, Equatable, Codable {
    case same
    /// Different, and docs/linux-differences.md explains why (a Linux-only effect).
    case explained
    case different
  }

  public struct Item: Sendable, Equatable {
    /// "verdict", "expectation 3", "notification TorDidBecomeReady", "order", "connections",
    /// "requests", "messages", "leaks".
    public var key: String
    /// What the item is about, for a reader ("proxy mode direct at 2 s").
    public var title: String
    public var a: String
    public var b: String
    public var status: Status
    /// Why the difference is expected, when explained.
    public var explanation: String?
  }

  public var scenario: String
  public var items: [Item]

  public var differences: [Item] { items.filter { $0.status != .same } }
  public var unexplained: [Item] { items.filter { $0.status == .different } }

  /// The default tolerance, seconds (docs/linux-differences.md, "Time").
  public static let defaultTolerance = 2.0

  public init(
    scenario: String, a: ComparisonObservation, b: ComparisonObservation,
    tolerance: Double = defaultTolerance, explained: KnownDifferences = .linux
  ) {
    self.scenario = scenario
    var items: [Item] = []
    // A known finding in bitchat's own code, recognised by its trace in that side's run
    // (docs/bitchat-source.md, "Findings"), explains what differs in that run: the model is
    // not the place to copy a bug of lib.rs. The same failure without the trace stays
    // unexplained.
    let finding = (a.findings ?? []).first ?? (b.findings ?? []).first
    func add(_ key: String, _ title: String, _ textA: String, _ textB: String, same: Bool) {
      var item = Item(key: key, title: title, a: textA, b: textB, status: same ? .same : .different)
      if !same, let why = explained.explanation(scenario: scenario, item: key) {
        item.status = .explained
        item.explanation = why
      } else if !same, let finding {
        item.status = .explained
        item.explanation = "a finding in bitchat's code (docs/bitchat-source.md): \(finding)"
      }
      items.append(item)
    }
    add(
      "verdict", "verdict", Self.verdictText(a), Self.verdictText(b),
      same: a.verdict == b.verdict)
    for index in 0..<max(a.expectations.count, b.expectations.count) {
      let ea = index < a.expectations.count ? a.expectations[index] : nil
      let eb = index < b.expectations.count ? b.expectations[index] : nil
      add(
        "expectation \(index + 1)", ea?.sentence ?? eb?.sentence ?? "",
        ea.map { "\($0.status): \($0.reason)" } ?? "-",
        eb.map { "\($0.status): \($0.reason)" } ?? "-", same: ea?.status == eb?.status)
    }
    for name in Set(a.notifications.keys).union(b.notifications.keys).sorted() {
      let ta = a.notifications[name] ?? []
      let tb = b.notifications[name] ?? []
      add(
        "notification \(name)", "\(name) posted at", Self.timesText(ta), Self.timesText(tb),
        same: Self.sameTimes(ta, tb, tolerance: tolerance))
    }
    let inversions = Self.orderInversions(a.milestones, b.milestones, tolerance: tolerance)
    add(
      "order", "the order of events",
      Self.orderText(a.milestones, inversions), Self.orderText(b.milestones, inversions),
      same: inversions.isEmpty)
    add(
      "connections", "relay connections", Self.listText(a.connections),
      Self.listText(b.connections), same: a.connections == b.connections)
    add(
      "requests", "requests", Self.listText(a.requests), Self.listText(b.requests),
      same: a.requests == b.requests)
    add(
      "messages", "messages sent to", Self.listText(a.messages), Self.listText(b.messages),
      same: a.messages == b.messages)
    add("leaks", "leaks", Self.listText(a.leaks), Self.listText(b.leaks), same: a.leaks == b.leaks)
    let commandsA = a.commands ?? []
    let commandsB = b.commands ?? []
    if !commandsA.isEmpty || !commandsB.isEmpty {
      add(
        "commands", "control-port commands, each once in order", Self.listText(commandsA),
        Self.listText(commandsB), same: commandsA == commandsB)
    }
    self.items = items
  }

  static func verdictText(_ o: ComparisonObservation) -> String {
    o.runError.map { "\(o.verdict) (\($0))" } ?? o.verdict
  }

  /// Same count, and each pair (in time order) within the tolerance.
  static func sameTimes(_ a: [Double], _ b: [Double], tolerance: Double) -> Bool {
    a.count == b.count && zip(a.sorted(), b.sorted()).allSatisfy { abs($0 - $1) <= tolerance }
  }

  /// Milestones seen on both sides whose order differs: "x before y" on A, "y before x" on B,
  /// and the gaps (y - x) on the two sides more than `tolerance` apart.
  static func orderInversions(
    _ a: [ComparisonObservation.Milestone], _ b: [ComparisonObservation.Milestone],
    tolerance: Double
  ) -> Set<String> {
    let ta = Dictionary(a.map { ($0.label, $0.time) }, uniquingKeysWith: min)
    let tb = Dictionary(b.map { ($0.label, $0.time) }, uniquingKeysWith: min)
    let shared = Set(ta.keys).intersection(tb.keys).sorted()
    var inverted = Set<String>()
    for (i, x) in shared.enumerated() {
      for y in shared[(i + 1)...] {
        let da = ta[y]! - ta[x]!
        let db = tb[y]! - tb[x]!
        if (da > 0) != (db > 0), da != 0 || db != 0, abs(da - db) > tolerance {
          inverted.insert(x)
          inverted.insert(y)
        }
      }
    }
    return inverted
  }

  static func orderText(_ m: [ComparisonObservation.Milestone], _ marked: Set<String>) -> String {
    guard !m.isEmpty else { return "-" }
    return m.map { (marked.contains($0.label) ? "*" : "") + "\($0.label) \(seconds($0.time))" }
      .joined(separator: ", ")
  }

  static func timesText(_ times: [Double]) -> String {
    times.isEmpty ? "never" : times.map(seconds).joined(separator: ", ")
  }

  static func listText(_ list: [String]) -> String {
    list.isEmpty ? "none" : list.joined(separator: "; ")
  }

  public static func seconds(_ t: Double) -> String { ExpectationJudge.seconds(t) }
}
