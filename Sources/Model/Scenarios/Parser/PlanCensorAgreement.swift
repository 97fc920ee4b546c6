import TorControl

/// On the mock lane a blocked guard is written twice: once as the censor's rule (what the wire
/// does) and once as the mock's bootstrap plan (what the mock reports). This rejects a scenario
/// whose two halves disagree, e.g. `reset` on `tor-guards` from the start with `healthy:5`
/// (the mock would report 100% through a guard nothing can reach), naming the plan and the
/// rule and the plan that would agree.
enum PlanCensorAgreement {
  /// A rule that blocks the mock's guard (10.66.1.10:9001, TCP), from the start of the run.
  struct GuardBlock {
    var index: Int
    var rule: CensorPlanRule
    /// A size rule (`longerThan`): TCP connects, the TLS handshake does not.
    var bySize: Bool { rule.longerThan != nil }
    /// When the block is lifted; nil: never.
    var until: Double? { rule.until }
  }

  /// The mock's guard port on the sandbox's wire (Sandbox.AddressPlan.guards; a test in
  /// ScenariosTests holds the two equal, so the model need not link the sandbox).
  static let mockGuardPort = 9001

  static func guardBlocks(_ network: NetworkPlan) -> [GuardBlock] {
    let guardPort = mockGuardPort
    return network.censor.enumerated().compactMap { index, rule in
      guard [.torGuards, .world, .any].contains(rule.target),
        rule.transport == nil || rule.transport == .tcp,
        rule.port == nil || rule.port == guardPort,
        (rule.from ?? 0) <= 0
      else { return nil }
      return GuardBlock(index: index, rule: rule)
    }
  }

  static func check(
    _ tor: TorPlan, _ network: NetworkPlan, duration: Double, reader: FieldReader
  ) throws(ScenarioError) {
    guard let plan = tor.plan, let block = guardBlocks(network).first else { return }
    let path = "\(reader.childPath("censor"))[\(block.index)]"
    let lifted = block.until.map { "until \(formatSeconds($0))" } ?? "for the whole run"
    let what =
      "censor rule \(path) (\(block.rule.action.rawValue) \(block.rule.target)"
      + (block.bySize ? " longerThan \(block.rule.longerThan!)" : "") + ") blocks the guard "
      + lifted
    // The phase a blocked guard leaves tor at: a full block stops the TCP connection (5%
    // conn); a size rule lets it through and stops the TLS handshake (10% conn_done, 14%).
    let furthest = block.bySize ? 14 : 5
    let failure: BootstrapPlan.StallFailure? =
      block.bySize
      ? nil
      : block.rule.action == .reset ? .connectRefused : block.rule.action == .drop ? .timeout : nil
    let agreeing =
      "stall:" + (block.bySize ? "conn_done" : "conn")
      + (failure.map { ":" + $0.rawValue } ?? "")
      + (block.until.map { ":" + BootstrapPlan.format($0) } ?? "")
    func contradiction(_ why: String) -> ScenarioError {
      ScenarioError(
        file: reader.file, path: "tor.bootstrap",
        message: "\"\(tor.bootstrap)\" contradicts \(what): \(why); a plan that agrees: "
          + "\"\(agreeing)\"")
    }
    func checkStall(_ tag: String, _ written: BootstrapPlan.StallFailure) throws(ScenarioError) {
      let progress = BootstrapPhase.named(tag)?.progress ?? 0
      if progress > furthest {
        throw contradiction(
          "tor cannot get past \(furthest)% through that block, the plan stalls at "
            + "\(progress)% (\(tag))")
      }
      if let failure, written != .none, written != failure {
        throw contradiction(
          "a \(block.rule.action.rawValue) makes tor report "
            + (failure == .timeout ? "TIMEOUT" : "CONNECTREFUSED")
            + ", the plan reports \(written == .timeout ? "TIMEOUT" : "CONNECTREFUSED")")
      }
    }
    switch plan {
    case .neverStarting:
      return
    case .healthy(let ready), .flapping(let ready):
      if (block.until ?? .infinity) >= ready {
        throw contradiction(
          "the plan reaches 100% at \(formatSeconds(ready)), through a guard nothing can reach")
      }
    case .crash:
      if (block.until ?? .infinity) >= BootstrapPlan.defaultHealthySeconds {
        throw contradiction("the plan reaches 100% before its crash, through a blocked guard")
      }
    case .stalled(let tag, let written):
      try checkStall(tag, written)
      if let until = block.until, until < duration {
        throw contradiction(
          "the block is lifted at \(formatSeconds(until)) but the stall never ends (tor's next "
            + "attempt would get through)")
      }
    case .recovering(let tag, let written, let recovers):
      try checkStall(tag, written)
      if recovers < (block.until ?? .infinity) {
        throw contradiction(
          "the stall ends at \(formatSeconds(recovers)) while the guard is still blocked")
      }
    }
  }
}
