import Scenarios

/// What a soak runs: how many runs of each phase, bounded in count and time, and the
/// libraries it goes round: the mock lane's model scenarios of Scenarios/, the real-Tor
/// lane's of 30 s or less, and `exec` of one small command through the mock Tor.
struct SoakPlan: Sendable {
  var mock: Int
  var real: Int
  var exec: Int
  /// Real minutes after which the soak stops between runs.
  var maxMinutes: Double
  var mockLibrary: [Scenario]
  var realLibrary: [Scenario]
  var execCommand: [String]
  var canary: SoakCanary?

  /// `tools/soak`'s defaults: the 500, 50 and 50.
  static let defaults = (mock: 500, real: 50, exec: 50, minutes: 90)
  /// The bounds of --mock, --real, --exec and --max-minutes.
  static let mockLimit = 1000
  static let realLimit = 100
  static let execLimit = 100
  static let minutesLimit = 600
  /// The real-Tor lane's files longer than this are left out: bitchat's 80 s bridge scenario
  /// alone would take a third of the phase, on the same path as the hardened one's 30 s.
  static let realDurationLimit = 30.0

  /// The command `exec` runs: a fetch through the mock Tor's SOCKS port, the name sent to the
  /// proxy (a pass: only the guard is contacted).
  static let execCommand = [
    "curl", "-sS", "-o", "/dev/null", "--max-time", "20", "--socks5-hostname",
    "127.0.0.1:39050", "http://web.example/",
  ]

  /// The mock lane's library: the model's mock-lane files (no program file, no file only
  /// bitchat's own code runs), whose name contains `filter` when given, in name order.
  static func mockLibrary(_ scenarios: [Scenario], filter: String?) -> [Scenario] {
    scenarios.filter {
      $0.lane == .mock && $0.app.profile != .program && $0.app.profile != .bitchatSource
        && (filter.map($0.name.contains) ?? true)
    }.sorted { $0.name < $1.name }
  }

  /// The real-Tor lane's library: the model's real-tor files of at most
  /// ``realDurationLimit`` seconds (no program file: it needs a command), whose name contains
  /// `filter` when given, in name order; replayed OONI measurements too when PATH holds them.
  static func realLibrary(_ scenarios: [Scenario], filter: String?) -> [Scenario] {
    scenarios.filter {
      $0.lane == .realTor && $0.app.profile != .bitchatSource && $0.app.profile != .program
        && $0.duration <= realDurationLimit
        && (filter.map($0.name.contains) ?? true)
    }.sorted { $0.name < $1.name }
  }

  /// Run `run` (1-based) of a phase goes round its library.
  static func scenario(run: Int, of library: [Scenario]) -> Scenario {
    library[(run - 1) % library.count]
  }
}
