import Scenarios

extension ScenarioCommandLines {
  /// The bitchat-source driver's transport for `scenario`, or nil when the model runs it:
  /// `bitchat-source` files always use the driver (`apple`); with `substitute` (leak-audit
  /// --sut bitchat-source) `bitchat` files do too and the naive-port canary runs bitchat's
  /// code on stock swift-corelibs URLSession (`linux-foundation`).
  public static func bitchatSourceTransport(
    _ scenario: Scenario, driver: String?, substitute: Bool
  ) throws(ScenarioError) -> String? {
    let transport: String
    switch scenario.app.profile {
    case .bitchatSource: transport = "apple"
    case .bitchat where substitute: transport = "apple"
    case .naivePort where substitute: transport = "linux-foundation"
    default: return nil
    }
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
  public static func bitchatSourceApp(
    driver: String, transport: String, actionsFile: String, stateDirectory: String,
    trustAnchors: String, torrcBase: String? = nil
  ) -> [String] {
    [
      driver, "--actions", actionsFile, "--state-dir", stateDirectory, "--ca", trustAnchors,
      "--transport", transport,
    ] + (torrcBase.map { ["--tor-base", $0] } ?? [])
  }
}
