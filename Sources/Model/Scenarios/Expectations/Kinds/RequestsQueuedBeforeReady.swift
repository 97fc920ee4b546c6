extension ScenarioExpectation {
  /// Messages and connects asked for while Tor was not ready were queued, and none was sent
  /// until Tor became ready. Direct sends while the user had Tor off are the user's choice,
  /// not a violation.
  public struct RequestsQueuedBeforeReady: ExpectationUnit {
    public static let name = "requests-queued-before-ready"

    public init() {}

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self { Self() }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      var ready = false
      var preferenceOn = facts.scenario.app.torPreference
      var queued = 0
      for event in facts.events {
        switch event.name {
        case ScenarioEventKind.torDidBecomeReady.name: ready = true
        case ScenarioEventKind.readyChanged.name: ready = event.fields["isReady"] == "true"
        case ScenarioEventKind.torUserPreferenceChanged.name:
          preferenceOn = event.fields["enabled"] != "false"
        // Onion Browser's held URL is queued too: it waits for Tor as a message does.
        case ScenarioEventKind.requestQueued.name, "request-held": queued += 1
        case ScenarioEventKind.requestSent.name, ScenarioEventKind.socketOpened.name:
          // The SOCKS probe and the control port are how the app learns readiness: not requests.
          let transport = event.fields["transport"] ?? ""
          if transport == "probe" || transport == "control" { break }
          if !ready, preferenceOn {
            let what = [
              event.fields["kind"], event.fields["target"], event.fields["url"],
              event.fields["endpoint"],
            ].compactMap { $0 }.joined(separator: " ")
            let verb =
              event.name == ScenarioEventKind.socketOpened.name ? "socket opened" : "request sent"
            return (
              .failed,
              "\(verb) at \(facts.seconds(event.time))\(what.isEmpty ? "" : " (\(what))") "
                + "while Tor was not ready"
            )
          }
        default: break
        }
      }
      if queued == 0 {
        return (
          .failed,
          "nothing was queued (no request-queued message or relay connect, no held URL): the "
            + "scenario did not exercise the queue"
        )
      }
      return (.met, "\(queued) request(s) queued, none sent before Tor was ready")
    }

    public var sentence: String {
      "requests (messages, relay connects, held URLs) wait, none sent before Tor is ready"
    }
  }
}
