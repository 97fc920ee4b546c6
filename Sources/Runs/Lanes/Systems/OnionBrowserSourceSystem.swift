import BitchatSource
import Scenarios

/// Onion Browser's own Tor layer, unmodified (docs/onion-browser-source.md): the driver built
/// from an Onion Browser checkout (`--onion-browser-src SRC`) with the project's shims, in real
/// time. It runs the Onion Browser scenarios of its checkout's version: a 2.X checkout
/// (OnionManager.swift) the onion-browser-2 files, a 3.X one (TorManager.swift) the
/// onion-browser-3 (and onion-browser) files, on the mock lane (ctor personality) and the
/// real-Tor lane. 1.X is Objective-C (no Tor layer in Swift to build).
public enum OnionBrowserSourceSystem {
  public static let entry = TestedSystem(
    name: "onion-browser-source",
    summary:
      "Onion Browser's own Tor layer, built from a checkout (--onion-browser-src SRC), in real "
      + "time",
    refusal:
      "is not an Onion Browser 2.X or 3.X scenario (the mock lane's with the ctor personality, "
      + "or the real-Tor lane's)",
    guide: """
      --sut onion-browser-source runs Onion Browser's own Tor layer (2.X OnionManager.swift, 3.X
      TorManager.swift) instead of the model: the Onion Browser scenarios of the checkout's
      version, on the mock lane (ctor personality: the mock's control port) and the real-Tor
      lane (its Tor.framework shim runs Debian's tor pinned to the private network), in real
      time, through the driver built from --onion-browser-src SRC (a checkout, REPO@COMMIT, or
      pinned:2.X|3.X with $FAILCLOSED_ONION_BROWSER_REPO; docs/onion-browser-source.md).
      """,
    options: [checkout],
    waitsInRealTime: true,
    // docs/onion-browser-source.md explains each difference from the model of its version.
    comparison: TestedSystemComparison(heldAgainst: [
      .init(.onionBrowser2, known: .onionBrowser), .init(.onionBrowser3, known: .onionBrowser),
    ]),
    adopt: { runs($0) ? $0 : nil },
    prepare: { scenarios, inputs in prepare(scenarios, inputs: inputs) })

  /// `--onion-browser-src SRC`: the checkout, REPO@COMMIT or pinned:2.X|3.X the driver is
  /// built from; without it this system runs nothing.
  public static let checkout = TestedSystemOption(
    "onion-browser-src", valueName: "SRC",
    help: "Onion Browser checkout (or REPO@COMMIT, pinned:2.X|3.X) for onion-browser-source",
    value: .directory)

  /// The Onion Browser version a scenario's profile is, nil for any other profile.
  public static func version(of scenario: Scenario) -> OnionBrowserTree.Version? {
    switch scenario.app.profile {
    case .onionBrowser2: return .v2
    case .onionBrowser3, .onionBrowser: return .v3
    default: return nil
    }
  }

  /// An Onion Browser 2.X or 3.X scenario, on the mock lane with the ctor personality (the
  /// app drives a control port) or on the real lane.
  public static func runs(_ scenario: Scenario) -> Bool {
    guard version(of: scenario) != nil else { return false }
    if scenario.lane == .mock { return scenario.tor.mock?.personality == .ctor }
    return true
  }

  /// Builds (or reuses) the driver and keeps the scenarios of the checkout's version. Without
  /// `--onion-browser-src` nothing runs (the reason says how to get one); a failed build ends
  /// the run.
  public static func prepare(_ scenarios: [Scenario], inputs: TestedSystemInputs)
    -> TestedSystemSetup
  {
    guard let source = inputs.value(of: checkout) else {
      return TestedSystemSetup(
        scenarios: [],
        unavailable: (
          "onion-browser-source needs --onion-browser-src SRC (an Onion Browser checkout, "
            + "REPO@COMMIT or pinned:2.X|3.X; docs/onion-browser-source.md)", endsRun: false
        ))
    }
    do {
      let built = try OnionBrowserSourceLocation.prepare(
        onionBrowserSource: source, progress: inputs.progress)
      let kept = scenarios.filter { version(of: $0) == built.version }
      let left = scenarios.count - kept.count
      if left > 0 {
        inputs.progress(
          "onion-browser-source: a \(built.version.rawValue).X checkout runs the "
            + "\(built.version.profileName) scenarios; \(left) of another version left out")
      }
      var setup = TestedSystemSetup(scenarios: kept)
      setup.onionBrowserSourceDriver = built.executable
      return setup
    } catch {
      return TestedSystemSetup(scenarios: [], unavailable: ("\(error)", endsRun: true))
    }
  }
}
