extension ScenarioExpectation {
  /// Real-Tor lane: every allowed flow on the wire went to one of these ports.
  public struct FlowsOnlyTo: ExpectationUnit {
    public static let name = "flows-only-to"
    public static let fields = ["ports"]
    public static let realTorOnly = true
    public var ports: [Int]

    public init(ports: [Int]) { self.ports = ports }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      var ports: [Int] = []
      var listed: Set<Int> = []
      for e in try input.reader.array("ports", required: true, minCount: 1, "ports")! {
        guard case .number(let n) = e.value, n.rounded() == n, n >= 1, n <= 65535 else {
          throw ScenarioError(
            file: input.file, path: e.path,
            message: "expected a port (an integer from 1 to 65535), got "
              + e.value.shortDescription)
        }
        if !listed.insert(Int(n)).inserted {
          throw ScenarioError(
            file: input.file, path: e.path, message: "port \(Int(n)) is listed twice")
        }
        ports.append(Int(n))
      }
      return Self(ports: ports)
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let flows = facts.outcome.audit.torFlows
      let portSet = Set(ports)
      let others = flows.filter { !$0.touches(portSet) }
      if !others.isEmpty {
        let list = others.prefix(5).map { "\($0.destination):\($0.destinationPort)" }
        return (
          .failed,
          "\(others.count) flow(s) to other ports: \(list.joined(separator: ", "))"
            + (others.count > 5 ? ", ..." : "")
        )
      }
      if facts.captureInconclusive { return facts.undecided("no flow to another port seen") }
      if flows.isEmpty { return (.failed, "no flow to a Tor address was seen at all") }
      let packets = flows.reduce(0) { $0 + $1.packets }
      return (
        .met,
        "\(flows.count) flow(s), \(packets) packets, all to port "
          + ports.map(String.init).joined(separator: " or ")
      )
    }

    public var sentence: String {
      "every flow goes to port " + ports.map(String.init).joined(separator: " or ")
    }
  }
}
