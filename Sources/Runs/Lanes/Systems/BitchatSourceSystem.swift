import BitchatSource
import Scenarios

/// bitchat's own code, unmodified (docs/bitchat-source.md): the driver built from a bitchat
/// checkout with the project's shims, in real time. The one place that says which scenarios
/// it runs and on which transport.
public enum BitchatSourceSystem {
  public static let entry = TestedSystem(
    name: "bitchat-source",
    summary: "bitchat's own code, built from a checkout (--bitchat-src DIR), in real time",
    refusal:
      "is not a bitchat scenario (the mock lane's with the arti personality, or the real-Tor "
      + "lane's)",
    guide: """
      --sut bitchat-source runs bitchat's own code instead of the model: the bitchat scenarios
      of the mock lane (arti personality) with the `apple` transport, the naive-port canary
      with stock swift-corelibs URLSession (`linux-foundation`), and the real-Tor lane's bitchat
      scenarios with arti.h over Debian's tor, in real time (bitchat reads the wall clock),
      through the driver built from a bitchat checkout (--bitchat-src DIR, default
      ../shared/upstream/bitchat; see `failclosed bitchat-source`). Files with the profile
      bitchat-source always run on it; without a checkout they are skipped with a note.
      """,
    options: [checkout],
    waitsInRealTime: true,
    // The model's bitchat against bitchat's code differs only where Linux does
    // (docs/linux-differences.md); hardened fixes bitchat's rules, so every difference counts.
    comparison: TestedSystemComparison(heldAgainst: [
      .init(.bitchat, known: .linux), .init(.hardened, known: .none),
    ]),
    adopt: { runs($0) ? onSource($0) : nil },
    prepare: { scenarios, inputs in
      prepare(scenarios, inputs: inputs, substituting: true)
    })

  /// `--bitchat-src DIR`: the checkout the driver is built from (default
  /// ../shared/upstream/bitchat, BitchatSourceLocation).
  public static let checkout = TestedSystemOption(
    "bitchat-src", valueName: "DIR", help: "bitchat checkout for bitchat-source",
    value: .directory)

  /// The transport bitchat's code runs `scenario` on, nil when the model runs it:
  /// bitchat-source files always (`apple`); when bitchat-source is the system under test
  /// (`substituting`), bitchat files too and the mock lane's naive-port canary on stock
  /// swift-corelibs URLSession (`linux-foundation`).
  public static func transport(for scenario: Scenario, substituting: Bool)
    -> BitchatSourceTransport?
  {
    switch scenario.app.profile {
    case .bitchatSource: return .apple
    case .bitchat where substituting: return .apple
    case .naivePort where substituting && scenario.lane == .mock: return .linuxFoundation
    default: return nil
    }
  }

  /// Whether bitchat's code can run `scenario`: a transport for it and, on the mock lane, the
  /// arti personality (bitchat links Arti; ctor is a control-port tor, which it does not use).
  /// The hardened and onion-browser profiles are the model's own.
  public static func runs(_ scenario: Scenario) -> Bool {
    if scenario.lane == .mock, scenario.tor.mock?.personality != .arti { return false }
    return transport(for: scenario, substituting: true) != nil
  }

  /// A bitchat scenario as it runs on the source (profile bitchat-source, so the reports say
  /// so); the naive-port canary keeps its profile.
  public static func onSource(_ scenario: Scenario) -> Scenario {
    var scenario = scenario
    if scenario.app.profile == .bitchat { scenario.app.profile = .bitchatSource }
    return scenario
  }

  /// Whether `scenario` needs the driver.
  static func needsDriver(_ scenario: Scenario, substituting: Bool) -> Bool {
    transport(for: scenario, substituting: substituting) != nil
  }

  /// Builds (or reuses) the driver when a scenario needs it. A failed build or a checkout
  /// given that cannot be used ends the run; no checkout anywhere only leaves out the
  /// scenarios that needed it, with the reason.
  public static func prepare(
    _ scenarios: [Scenario], inputs: TestedSystemInputs, substituting: Bool
  ) -> TestedSystemSetup {
    let needing = scenarios.filter { needsDriver($0, substituting: substituting) }
    guard !needing.isEmpty else {
      return TestedSystemSetup(scenarios: scenarios, substituteBitchatSource: substituting)
    }
    switch driver(inputs) {
    case .success(let path):
      return TestedSystemSetup(
        scenarios: scenarios, bitchatSourceDriver: path, substituteBitchatSource: substituting)
    case .failure(let error):
      let missing: Bool
      if case .noCheckout = error { missing = true } else { missing = false }
      var setup = TestedSystemSetup(
        scenarios: scenarios.filter { !needsDriver($0, substituting: substituting) },
        substituteBitchatSource: substituting,
        unavailable: ("\(error)", endsRun: inputs.value(of: checkout) != nil || !missing))
      setup.unavailableLane = entry.name
      return setup
    }
  }

  /// The driver built (or reused from the cache) from the checkout the inputs name, or the
  /// default one (BitchatSourceLocation).
  public static func driver(_ inputs: TestedSystemInputs) -> Result<String, BitchatSourceError> {
    do {
      return .success(
        try BitchatSourceLocation.prepare(
          bitchatSource: inputs.value(of: checkout), progress: inputs.progress
        ).executable)
    } catch let error as BitchatSourceError {
      return .failure(error)
    } catch {
      return .failure(.buildFailed("\(error)"))
    }
  }
}
