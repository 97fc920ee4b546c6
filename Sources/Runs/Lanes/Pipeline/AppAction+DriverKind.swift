import Scenarios
import SystemUnderTest

extension Scenarios.AppAction.Step {
  /// The app driver's action for this step (its name is the scenario file's verb); nil for
  /// tor-crash, which the runner does to the mock, not the app. A verb the model does not act
  /// on goes to the driver as written.
  public var driverKind: SystemUnderTest.AppAction.Kind? {
    switch self {
    case .start: return .start
    case .foreground: return .foreground
    case .background: return .background
    case .revokeActivation: return .revokeActivation
    case .grantActivation: return .grantActivation
    case .pathChange: return .pathChange(satisfied: true)
    case .refreshDirectory: return .refreshDirectory
    case .setPreference(let enabled): return .setPreference(enabled)
    case .addRelay(let url): return .addRelay(url)
    case .sendMessage(let text): return .sendMessage(text)
    case .openURL(let url): return .openURL(url)
    case .torCrash: return nil
    case .other(let verb, let argument): return .other(verb: verb, argument: argument)
    }
  }
}
