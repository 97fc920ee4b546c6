/// The soak's phases, in the order they run: the mock lane's library, the real-Tor lane's on
/// one private network, then `exec` of a small command through the mock Tor.
enum SoakPhase: String, CaseIterable, Sendable, Codable {
  case mock
  case real
  case exec
}

/// One sample: the counts, this process's resident memory and threads, at one point of the
/// soak.
struct SoakSample: Sendable, Codable, Equatable {
  enum Point: String, Sendable, Codable {
    /// Before the first run: the values every count must come back to.
    case start
    /// A phase's own set-up is made (the real lane's private network): its runs are held to
    /// this sample.
    case setUp = "set-up"
    /// After a run.
    case run
    /// A phase's set-up is gone again: held to the start.
    case tornDown = "torn-down"
  }

  var point: Point
  var phase: SoakPhase?
  /// 1-based, within its phase.
  var run: Int?
  var scenario: String?
  var verdict: String?
  /// Why the run did not pass (the judge's reasons, failed expectations), when it did not.
  var why: [String]? = nil
  /// The run's own wall time.
  var runSeconds: Double?
  var counts: ResourceCounts
  var rssKiB: Int
  var threads: Int
  /// The open descriptors by kind (socket, pipe, anon_inode:[eventpoll], a path).
  var descriptorKinds: [String: Int] = [:]
  /// How long the counts took to come back (the kernel removes a namespace's links after
  /// the namespace is gone); the sample is the last reading.
  var settleMilliseconds: Int = 0
  /// Counts whose directory walk stopped at its cap (their value is a floor).
  var capped: [SoakCount] = []
  /// Seconds since the soak began.
  var elapsedSeconds: Double
}

/// A goal the soak saw broken.
struct SoakFinding: Sendable, Codable, Equatable {
  enum Kind: String, Sendable, Codable {
    /// A count not back at its starting value.
    case count
    /// Resident memory grew by 5% or more.
    case rss
    /// A scenario's verdict differs from its first run's.
    case verdict
  }

  var kind: Kind
  var phase: SoakPhase?
  var run: Int?
  var scenario: String?
  var count: SoakCount?
  var expected: Int?
  var found: Int?
  var text: String
}
