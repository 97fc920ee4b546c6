/// When the authorities' first voting round ends, chosen when the nodes start. Pure.
///
/// tor's authorities vote on a wall-clock grid: a round's consensus is valid from a multiple of
/// the voting interval after midnight UTC plus `TestingV3AuthVotingStartOffset`, and each
/// authority votes a fixed time before it. Its first consensus lists only the relays whose
/// descriptors it has and whose ORPort it has reached by then (a relay it has not tested is not
/// Running, and a consensus leaves such relays out); the authorities test each other too. On a
/// grid that ignores the start, the first vote fell anywhere from at once (nodes not up yet: a
/// consensus without them, and the next round 5-10 s later) to a whole interval after they
/// were in. The offset is chosen instead so that the first vote comes 4-5 s after the launch:
/// the nodes are up and tested 2-3 s after it on a quiet machine, 4-7 s under heavy load
/// (docs/performance.md). An authority expects the first grid point after it reads its torrc,
/// and refuses votes for any other round until it first schedules its voting (measured: a slow
/// authority refused the others' votes for the round 6.3 s after the launch, expecting the one
/// 0.3 s after, and the first consensus came a round later). So the authorities start on the
/// whole second one interval before the round (``authoritiesStart``, at most 1 s after the
/// launch), the other nodes at the launch: they need the longer start (their keys, the upload)
/// and upload at least 1.5 s after they start, when the authorities listen.
public struct FirstVotingRound: Sendable, Equatable {
  /// `TestingV3AuthInitialVotingInterval`, the grid before the first consensus. tor accepts 5,
  /// 6, 8 or 9 s in a testing network (they divide 30 minutes). Below 8 it cuts the vote and
  /// distribution delays to a quarter of the interval each (1 s), so the vote is 2 s before the
  /// consensus; 6 rather than 5 gives the nodes a second more to start, upload their
  /// descriptors and be tested before that vote.
  public static let interval = 6
  /// Seconds from the vote to the consensus on that grid: tor's vote and distribution delays,
  /// each interval / 4.
  public static let voteToConsensus = 2 * (interval / 4)

  /// The first consensus's valid-after time (seconds since 1970, UTC).
  public let validAfter: Int

  /// - Parameter launch: the wall-clock time the relays start (seconds since 1970).
  public init(launch: Double) {
    validAfter = Int(launch.rounded(.up)) + Self.interval
  }

  /// When the authorities start: the whole second one interval before the round, so that the
  /// round is the first grid point after they read their torrc.
  public var authoritiesStart: Int { validAfter - Self.interval }

  /// `TestingV3AuthVotingStartOffset`: tor counts intervals from midnight UTC, and a day is a
  /// whole number of intervals, so the offset is the valid-after time modulo the interval.
  public var offset: Int { validAfter % Self.interval }

  /// When the authorities vote (seconds since 1970).
  public var vote: Int { validAfter - Self.voteToConsensus }
}
