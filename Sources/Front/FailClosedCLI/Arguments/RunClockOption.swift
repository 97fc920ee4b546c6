import FailClosedSupport

/// `--epoch NANOSECONDS`: the run's time 0 as an instant of CLOCK_MONOTONIC, made once by the
/// scenario runner and handed to every process it starts (`mock-tor`, `app`) beside
/// `--time-scale`, so they all read the run's clock (``ScaledClock``).
enum RunClockOption {
  static let spec = OptionSpec(
    "epoch", .single, valueName: "NANOSECONDS|stdin",
    help: "the run's time 0 in CLOCK_MONOTONIC nanoseconds; stdin: handed over once set up "
      + "(the scenario runner's)")

  /// `--clock-page PATH`: the run's event clock (``EventClock``): the page the runner made
  /// in the run's directory, which every process of the run maps.
  static let pageSpec = OptionSpec(
    "clock-page", .single, valueName: "PATH",
    help:
      "the run's clock page: the event clock, whose time only the runner moves (the scenario runner's)",
    values: .file)

  /// `--skip-idle` / `--no-skip-idle` (leak-audit, replay): the mock lane's model on the event
  /// clock, or a plain scaled clock.
  static let skipIdleSpecs = [
    OptionSpec(
      "skip-idle", .flag,
      help:
        "mock lane: the event clock: time stands still while any process works and jumps idle time to the next deadline, so nothing runs late (default \(skipIdleDefault ? "on" : "off"))"
    ),
    OptionSpec(
      "no-skip-idle", .flag,
      help: "mock lane: a plain scaled clock (a loaded machine can make it late), no jumps"),
  ]

  /// Whether the mock lane runs the event clock when neither flag is given.
  static let skipIdleDefault = true

  static func skipIdle(_ arguments: ParsedArguments) throws -> Bool {
    if arguments.has("skip-idle") && arguments.has("no-skip-idle") {
      throw UsageError("--skip-idle and --no-skip-idle: give one")
    }
    if arguments.has("skip-idle") { return true }
    if arguments.has("no-skip-idle") { return false }
    return skipIdleDefault
  }

  /// `--epoch stdin`: the runner hands the epoch over on standard input once the process has
  /// set up (``EpochReceiver``).
  static func isHandedOver(_ arguments: ParsedArguments) -> Bool {
    arguments.value("epoch") == EpochReceiver.optionValue
  }

  /// An epoch further ahead than this is a mistake: the runner gives one a moment ahead.
  static let maximumLead = 3600.0

  static func epoch(_ arguments: ParsedArguments) throws -> MonotonicInstant? {
    guard let text = arguments.value("epoch"), text != EpochReceiver.optionValue else {
      return nil
    }
    guard let epoch = MonotonicInstant(text) else {
      throw UsageError(
        "--epoch: expected CLOCK_MONOTONIC nanoseconds (a whole number) or stdin, got '\(text)'"
      )
    }
    let ahead = epoch.seconds(since: .now)
    if ahead > maximumLead {
      throw UsageError(
        "--epoch: \(Int(ahead)) s ahead of now; the runner gives an instant a moment ahead")
    }
    if -ahead > ParsedArguments.maximumSeconds {
      throw UsageError(
        "--epoch: \(Int(-ahead)) s ago, longer than any run (at most \(Int(ParsedArguments.maximumSeconds)) s)"
      )
    }
    return epoch
  }
}
