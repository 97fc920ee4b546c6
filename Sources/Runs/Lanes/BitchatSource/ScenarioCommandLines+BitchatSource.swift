import BitchatSource
import Scenarios

extension ScenarioCommandLines {
  /// The bitchat-source driver's transport for `scenario` (``BitchatSourceSystem``'s rule),
  /// or nil when the model runs it; an error when the driver is needed but missing, or the
  /// scenario's Tor is not one bitchat's code can drive.
  public static func bitchatSourceTransport(
    _ scenario: Scenario, driver: String?, substitute: Bool
  ) throws(ScenarioError) -> BitchatSourceTransport? {
    guard
      let transport = BitchatSourceSystem.transport(for: scenario, substituting: substitute)
    else { return nil }
    guard driver != nil else {
      throw ScenarioError(
        file: scenario.path, path: "app.profile",
        message:
          "bitchat-source needs the driver built from a bitchat checkout (leak-audit "
          + "--bitchat-src DIR, or failclosed bitchat-source build)")
    }
    if let plan = scenario.tor.mock, plan.personality != .arti {
      throw ScenarioError(
        file: scenario.path, path: "tor.personality",
        message: "bitchat-source links Arti (arti.h): only the arti personality drives it")
    }
    return transport
  }

  /// The bitchat-source driver's command line: the same actions file and state directory as
  /// `failclosed app` (preferences.json, the relay-directory cache), the world's CA for TLS.
  /// On the real-Tor lane, `torrcBase` (the private network's settings) makes arti.h run
  /// Debian's tor pinned by it, with its logs in `<state>/tor` where the lane reads them.
  /// `bootstrapEndOrder` (the scenario's) orders arti.h's overlapping bootstraps.
  public static func bitchatSourceApp(
    driver: String, transport: BitchatSourceTransport, actionsFile: String,
    stateDirectory: String,
    trustAnchors: String, torrcBase: String? = nil,
    bootstrapEndOrder: TorPlan.BootstrapEndOrder? = nil
  ) -> [String] {
    [
      driver, "--actions", actionsFile, "--state-dir", stateDirectory, "--ca", trustAnchors,
      "--transport", transport.rawValue,
    ] + (torrcBase.map { ["--tor-base", $0] } ?? [])
      + (bootstrapEndOrder.map { ["--bootstrap-end-order", $0.rawValue] } ?? [])
  }
}
