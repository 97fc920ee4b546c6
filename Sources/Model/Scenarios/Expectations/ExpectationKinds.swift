/// Every expectation kind, once. The parser accepts exactly these names and hands each
/// object to its unit; the judge asks the same unit. A kind left out of this list cannot be
/// written in a scenario file, and the schema test says which one (its canary removes one).
public enum ExpectationKinds {
  public static let all: [any ExpectationUnit.Type] = [
    ScenarioExpectation.NoLeak.self, ScenarioExpectation.LeakCaught.self,
    ScenarioExpectation.RequestsQueuedBeforeReady.self, ScenarioExpectation.Notification.self,
    ScenarioExpectation.NoNotification.self, ScenarioExpectation.Event.self,
    ScenarioExpectation.NoEvent.self, ScenarioExpectation.RequestSent.self,
    ScenarioExpectation.ProxyMode.self, ScenarioExpectation.BootstrapSummary.self,
    ScenarioExpectation.EventsInOrder.self, ScenarioExpectation.TrafficOnlyToTor.self,
    ScenarioExpectation.ClearnetByUserChoice.self, ScenarioExpectation.BootstrapReaches.self,
    ScenarioExpectation.BootstrapStuck.self, ScenarioExpectation.BootstrapProblem.self,
    ScenarioExpectation.BootstrapThroughBridge.self, ScenarioExpectation.FlowsOnlyTo.self,
    ScenarioExpectation.BootstrapStopsAt.self, ScenarioExpectation.Reachability.self,
    ScenarioExpectation.ProgramSucceeds.self, ScenarioExpectation.FailsClosed.self,
  ]

  /// The unit of the kind written `name` in `units` (the list above unless a test says).
  public static func unit(
    named name: String, in units: [any ExpectationUnit.Type] = all
  ) -> (any ExpectationUnit.Type)? {
    units.first { $0.name == name }
  }
}
