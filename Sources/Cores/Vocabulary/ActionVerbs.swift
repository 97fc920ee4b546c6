/// Every action verb, once (``ActionVerb``). A verb left out of this list cannot be written in
/// a scenario file or an actions file; tests hold the list against the scenario schema, the
/// app driver, the shims' generated copy and the docs, and add a trivial verb to show that an
/// entry here is all a new verb needs to be read everywhere.
public enum ActionVerbs {
  public static let all: [ActionVerb] = [
    start, foreground, background, setPreference, revokeActivation, grantActivation, pathChange,
    addRelay, sendMessage, refreshDirectory, openURL, torCrash, wait,
  ]

  public static let start = ActionVerb("start", "launch the app (TorManager.startIfNeeded)")
  public static let foreground = ActionVerb("foreground", "the app comes to the foreground")
  public static let background = ActionVerb("background", "the app goes to the background")
  public static let setPreference = ActionVerb(
    "set-preference", "the user turns routing through Tor on or off",
    scenario: ActionArgument("enabled", .bool),
    driver: ActionArgument("value", .choice(["on", "off"], fallback: nil)), apps: .bitchat)
  public static let revokeActivation = ActionVerb(
    "revoke-activation", "network activation is withdrawn", apps: .bitchat)
  public static let grantActivation = ActionVerb(
    "grant-activation", "network activation is granted", apps: .bitchat)
  public static let pathChange = ActionVerb(
    "path-change", "an NWPathMonitor update",
    driver: ActionArgument(
      "status", .choice(["satisfied", "unsatisfied"], fallback: "satisfied")))
  public static let addRelay = ActionVerb(
    "add-relay", "the user adds a relay URL", scenario: ActionArgument("url", .text(fallback: nil)),
    driver: ActionArgument("url", .text(fallback: nil)), apps: .bitchat)
  public static let sendMessage = ActionVerb(
    "send-message", "the user sends a message",
    scenario: ActionArgument("text", .text(fallback: "hello")),
    driver: ActionArgument("text", .text(fallback: nil)), apps: .bitchat)
  public static let refreshDirectory = ActionVerb(
    "refresh-directory", "GeoRelayDirectory refreshes its list", apps: .bitchat)
  public static let openURL = ActionVerb(
    "open-url", "an incoming app URL (that Onion Browser version's URL schemes)",
    scenario: ActionArgument("url", .text(fallback: nil)),
    driver: ActionArgument("url", .text(fallback: nil)), apps: .onionBrowser)
  public static let torCrash = ActionVerb(
    "tor-crash", "the harness kills the mock Tor (mock lane only)", performer: .mockTor)
  public static let wait = ActionVerb(
    "wait", "the driver waits this many virtual seconds",
    driver: ActionArgument("seconds", .seconds), performer: .driver)

  /// The verb written `name` in `verbs` (the list above unless a test says).
  public static func verb(named name: String, in verbs: [ActionVerb] = all) -> ActionVerb? {
    verbs.first { $0.name == name }
  }

  /// The verbs scenario files may write, in list order.
  public static func scenarioNames(in verbs: [ActionVerb] = all) -> [String] {
    verbs.filter(\.inScenarios).map(\.name)
  }

  /// The verbs actions files may write, in list order.
  public static func actionsFileNames(in verbs: [ActionVerb] = all) -> [String] {
    verbs.filter(\.inActionsFiles).map(\.name)
  }
}
