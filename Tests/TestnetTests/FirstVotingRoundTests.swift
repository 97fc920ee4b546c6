import Testing

@testable import Testnet

/// The first voting round placed on tor's wall-clock grid from the launch time, and the
/// authorities' torrc that carries it.
@Suite struct FirstVotingRoundTests {
  /// 2026-12-01 00:00:00 UTC: tor counts the grid from midnight.
  static let midnight = 1_796_083_200.0

  @Test func theVoteComesFourToFiveSecondsAfterTheLaunch() {
    for fraction in [0.0, 0.2, 0.999] {
      for second in 0..<12 {
        let launch = Self.midnight + 3_600 + Double(second) + fraction
        let round = FirstVotingRound(launch: launch)
        #expect(Double(round.vote) >= launch + 4)
        #expect(Double(round.vote) < launch + 5)
        #expect(round.vote == round.validAfter - 2)
        // The authorities start on a whole second, no earlier than the launch and within 1 s.
        #expect(Double(round.authoritiesStart) >= launch)
        #expect(Double(round.authoritiesStart) < launch + 1)
      }
    }
  }

  /// tor's own rule (voting_sched_get_start_of_interval_after): the first point of
  /// midnight + k * interval + offset strictly after `now`. An authority that reads its torrc
  /// or schedules its voting at any moment from its start up to the round lands on the round.
  @Test func torsGridFromAnyMomentAfterTheAuthoritiesStartLandsOnTheRound() {
    let interval = FirstVotingRound.interval
    for second in 0..<30 {
      let launch = Self.midnight + 7_200 + Double(second) + 0.4
      let round = FirstVotingRound(launch: launch)
      #expect((0..<interval).contains(round.offset))
      var moment = Double(round.authoritiesStart)
      while moment < Double(round.validAfter) {
        let now = Int(moment.rounded(.down)) - Int(Self.midnight)
        var next = (now / interval + 1) * interval + round.offset
        if next - interval > now { next -= interval }
        #expect(next + Int(Self.midnight) == round.validAfter, "scheduled at \(moment)")
        moment += 0.5
      }
    }
  }

  @Test func onlyAuthoritiesCarryTheOffset() {
    let plan = TestnetPlan.loopback()
    let builder = TorrcBuilder(authorities: [
      .init(node: plan.authorities[0], v3Identity: "V3", fingerprint: "FP")
    ])
    let round = FirstVotingRound(launch: Self.midnight + 12.5)
    let authority = builder.node(plan.authorities[0], dataDirectory: "/d", firstRound: round)
    #expect(authority.contains("TestingV3AuthInitialVotingInterval 6\n"))
    #expect(authority.contains("TestingV3AuthVotingStartOffset \(round.offset)\n"))
    #expect(round.offset == 1)  // 00:00:19 is 3 * 6 + 1
    let exit = builder.node(plan.nodes.first { $0.role == .exit }!, dataDirectory: "/d")
    #expect(!exit.contains("TestingV3AuthVotingStartOffset"))
    let unplaced = builder.node(plan.authorities[0], dataDirectory: "/d")
    #expect(!unplaced.contains("TestingV3AuthVotingStartOffset"))
  }
}

/// Readiness needs every relay listed with the flags a client's paths need, not only listed.
@Suite struct ConsensusShortfallTests {
  static func consensus(_ entries: [(String, String)]) throws -> Consensus {
    var text = "network-status-version 3\n"
    for (index, (name, flags)) in entries.enumerated() {
      text +=
        "r \(name) AAAA BBBB 2026-12-01 10:00:00 127.0.0.1 \(17001 + index) 0\ns \(flags)\n"
    }
    return try Consensus(text: text)
  }

  static let plan = TestnetPlan.loopback()

  @Test func aConsensusWithEveryRelayAndItsFlagsIsReady() throws {
    let consensus = try Self.consensus([
      ("auth1", "Authority Running V2Dir Valid"), ("auth2", "Authority Running V2Dir Valid"),
      ("auth3", "Authority Running V2Dir Valid"),
      ("exit1", "Exit Fast Guard HSDir Running Valid"), ("middle1", "Fast Guard Running Valid"),
    ])
    #expect(Self.plan.shortfall(of: consensus).isEmpty)
  }

  @Test func aMissingRelayOrFlagIsNamed() throws {
    let consensus = try Self.consensus([
      ("auth1", "Authority Running V2Dir Valid"), ("auth2", "Authority Running V2Dir Valid"),
      ("auth3", "Authority V2Dir Valid"), ("exit1", "Fast Guard Running Valid"),
    ])
    #expect(
      Self.plan.shortfall(of: consensus) == [
        "auth3 (no Running)", "exit1 (no Exit)", "middle1 (not listed)",
      ])
  }
}
