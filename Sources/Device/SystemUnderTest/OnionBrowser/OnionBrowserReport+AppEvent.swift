import OnionBrowserModel
import TorControl

extension OnionBrowserReport {
  /// The fields of the `tor` event this report becomes (docs/app-driver.md); nil for none
  /// (a successful AUTHENTICATE shows in the setup commands that follow it).
  var eventFields: [String: EventValue]? {
    switch self {
    case .authenticated:
      return nil
    case .bootstrap(let phase):
      return [
        "phase": "bootstrap", "progress": .int(phase.progress), "tag": .string(phase.tag),
        "summary": .string(phase.summary),
      ]
    case .problem(let problem):
      return [
        "phase": "problem", "progress": .int(problem.phase.progress),
        "tag": .string(problem.phase.tag), "summary": .string(problem.phase.summary),
        "reason": .string(problem.reason), "count": .int(problem.count),
        "detail": .string(
          "\(problem.warning); recommendation \(problem.recommendation); host \(problem.hostAddress)"
        ),
      ]
    case .command(let line):
      return ["phase": "command", "command": .string(line)]
    case .replyTimeout(let command, let seconds):
      return [
        "phase": "reply-timeout", "command": .string(command),
        "detail": .string("no answer within \(seconds) s"),
      ]
    case .replyError(let command, let code, let text):
      return [
        "phase": "command", "command": .string(command), "detail": .string("\(code) \(text)"),
      ]
    case .stalled(let seconds, let toggled):
      return [
        "phase": "problem", "reason": "no-progress",
        "detail": .string(
          "no bootstrap report for \(seconds) s: "
            + (toggled
              ? "cycling DisableNetwork" : "no DisableNetwork cycle (bridges, or no controller)")),
      ]
    case .circuitEstablished:
      return ["phase": "bootstrap", "detail": "circuit established"]
    case .socksListener(let address):
      return ["phase": "socks", "detail": .string(address)]
    case .ready:
      return ["phase": "ready"]
    case .failed(let reason):
      return ["phase": "failed", "detail": .string(reason)]
    case .exitApp(let reason):
      return ["phase": "exit", "detail": .string(reason)]
    case .closed(let reason):
      return ["phase": "process", "detail": .string("control connection closed: \(reason)")]
    }
  }
}
