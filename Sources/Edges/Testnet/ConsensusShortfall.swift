/// What a consensus still lacks before a client can use the network: every relay of the plan
/// listed (a consensus lists only relays the authorities found Running), each with the flags
/// a client's paths need. Pure.
extension TestnetPlan {
  /// The flags `node` must carry: Running and Valid for every relay; Guard for the relays a
  /// client builds circuits through, and Exit for the exit (TestingDirAuthVoteGuard and
  /// TestingDirAuthVoteExit make the authorities vote them). Not Fast: no testing option forces
  /// it, tor gives it by advertised bandwidth, and a new exit went without it for 120 s (the
  /// real lane's world namespace) while clients bootstrapped and fetched through it. (No onion
  /// services run on the network, so HSDir is not needed.)
  public func requiredFlags(_ node: TestnetNode) -> [String] {
    switch node.role {
    case .authority, .bridge: return ["Running", "Valid"]
    case .middle: return ["Guard", "Running", "Valid"]
    case .exit: return ["Exit", "Guard", "Running", "Valid"]
    }
  }

  /// Each relay the consensus does not list, or lists without a flag it needs, e.g.
  /// "middle1 (not listed)", "exit1 (no Exit)"; empty when the network is ready.
  public func shortfall(of consensus: Consensus) -> [String] {
    relays.compactMap { node in
      guard let router = consensus.routers.first(where: { $0.nickname == node.name }) else {
        return "\(node.name) (not listed)"
      }
      let missing = requiredFlags(node).filter { !router.flags.contains($0) }
      return missing.isEmpty ? nil : "\(node.name) (no \(missing.joined(separator: ", ")))"
    }
  }
}
