/// A program under test as a black box (`leak-audit --app -- CMD`, `--app-profile FILE`, or a
/// scenario's `app.program`): what runs in the device, which Tor it gets, when it starts, and
/// what its success looks like from outside (exit status, a line it prints, a file it writes).
/// The scenarios judge it by those and by the capture alone: nothing inside it is seen.
public struct ProgramSpec: Sendable, Equatable {
  /// The Tor the program is given: the mock's personalities on 127.0.0.1:39050 (control port
  /// 39051 with ctor).
  public enum Tor: String, Sendable, CaseIterable {
    /// Arti in process: SOCKS bound only once bootstrapped (a connect before is refused).
    case arti
    /// C tor: SOCKS and control port open from the start; requests wait for the bootstrap.
    case ctor
    /// Debian's tor, a client of the private Tor network (the real-Tor lane), started by the
    /// lane in the device on the same ports; pinned to the network's authorities.
    case debian
  }

  /// When the program starts: at its `start` action (time 0 unless the scenario says), or
  /// once the Tor side has bootstrapped (at most half the scenario's duration after its
  /// `start` action, then it starts anyway and says so).
  public enum Start: String, Sendable, CaseIterable {
    case withTor = "with-tor"
    case afterBootstrap = "after-bootstrap"
  }

  /// What counts as the program succeeding; every part given must hold.
  public struct Success: Sendable, Equatable {
    /// The exit status (nil: any, when another part is given).
    public var exit: Int?
    /// A regular expression one line of its output (stdout and stderr) must match.
    public var output: String? {
      didSet { outputPattern = output.flatMap(CompiledPattern.init) }
    }
    /// A file that must exist when it ends (a path in the device's file system).
    public var file: String?
    /// `output` compiled, once for every check of a run (nil: none, or not a regular
    /// expression, which the parser refuses and nothing matches).
    private(set) var outputPattern: CompiledPattern?

    public init(exit: Int? = 0, output: String? = nil, file: String? = nil) {
      self.exit = exit
      self.output = output
      self.file = file
      outputPattern = output.flatMap(CompiledPattern.init)
    }

    /// The parser's: `output` already compiled.
    init(exit: Int?, outputPattern: CompiledPattern?, file: String?) {
      self.exit = exit
      output = outputPattern?.source
      self.file = file
      self.outputPattern = outputPattern
    }

    /// "exit 0, a line matching 'ok', /tmp/out written".
    public var sentence: String {
      var parts: [String] = []
      if let exit { parts.append("exit \(exit)") }
      if let output { parts.append("a line matching '\(output)'") }
      if let file { parts.append("\(file) written") }
      return parts.isEmpty ? "it ends" : parts.joined(separator: ", ")
    }
  }

  /// argv; the first word is looked up on PATH.
  public var arguments: [String]
  /// Added to the harness's environment (PATH, HOME, LANG and the like are kept).
  public var environment: [String: String]
  public var workingDirectory: String?
  public var tor: Tor
  public var start: Start
  public var success: Success

  public init(
    arguments: [String], environment: [String: String] = [:], workingDirectory: String? = nil,
    tor: Tor = .ctor, start: Start = .withTor, success: Success = Success()
  ) {
    self.arguments = arguments
    self.environment = environment
    self.workingDirectory = workingDirectory
    self.tor = tor
    self.start = start
    self.success = success
  }

  /// The mock's personality for this program's Tor (nil: Debian's tor, on the real lane).
  public var personality: TorPlan.Personality? {
    switch tor {
    case .arti: return .arti
    case .ctor: return .ctor
    case .debian: return nil
    }
  }

  /// The lane this program's scenarios run on.
  public var lane: Lane { tor == .debian ? .realTor : .mock }
}
