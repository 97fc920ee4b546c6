import Scenarios
import SystemUnderTest
import Vocabulary

extension ActionStep {
  /// The app driver's action for this scenario step (the same value: one type); nil for
  /// tor-crash, which the runner does to the mock, not the app.
  public var driverKind: SystemUnderTest.AppAction.Kind? {
    entry?.performer == .mockTor ? nil : self
  }
}
