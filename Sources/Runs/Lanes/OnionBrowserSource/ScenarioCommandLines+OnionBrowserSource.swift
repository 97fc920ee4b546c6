import Scenarios

extension ScenarioCommandLines {
  /// The onion-browser-source driver's command line: the same actions file and state directory
  /// (preferences.json: the real lane's bridges) as `failclosed app`, the world's CA. On the
  /// mock lane its Tor is the mock's control port; on the real lane (`torrcBase`, the private
  /// network's settings) TorThread runs Debian's tor pinned by it, its logs in `<state>/tor`.
  public static func onionBrowserSourceApp(
    driver: String, actionsFile: String, stateDirectory: String, trustAnchors: String,
    torrcBase: String? = nil
  ) -> [String] {
    [
      driver, "--actions", actionsFile, "--state-dir", stateDirectory, "--ca", trustAnchors,
    ]
      + (torrcBase.map { ["--tor-base", $0] }
        ?? ["--control", "127.0.0.1:\(controlPort)"])
  }
}
