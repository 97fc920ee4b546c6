import TorControl

/// One bootstrap report as a controller reads it, from a `GETINFO status/bootstrap-phase` reply
/// line (`status/bootstrap-phase=NOTICE BOOTSTRAP PROGRESS=5 ...`) or a STATUS_CLIENT event
/// (`STATUS_CLIENT WARN BOOTSTRAP PROGRESS=5 ... WARNING="..." REASON=... COUNT=...`). A WARN
/// report carries the problem; tor repeats the last one in the GETINFO answer.
public struct OnionBrowserBootstrapStatus: Hashable, Sendable {
  public let phase: BootstrapPhase
  /// Present for WARN reports (tor's bootstrap problems).
  public let problem: BootstrapWarning?

  public init(phase: BootstrapPhase, problem: BootstrapWarning? = nil) {
    self.phase = phase
    self.problem = problem
  }

  /// Reads the text of one reply or event line; nil when it is not a bootstrap report or its
  /// PROGRESS is missing or not a number.
  public init?(line text: String) {
    var body = Substring(text)
    if let equals = body.firstIndex(of: "="), body[..<equals] == "status/bootstrap-phase" {
      body = body[body.index(after: equals)...]
    } else if body.hasPrefix("STATUS_CLIENT ") {
      body = body.dropFirst("STATUS_CLIENT ".count)
    } else {
      return nil
    }
    let words = body.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
    guard words.count == 3, words[1] == "BOOTSTRAP" else { return nil }
    let severity = words[0]
    guard
      let arguments = ControlArguments.keyValues(
        String(words[2]), omitKeys: false, omitValues: true)
    else { return nil }
    var values: [String: String] = [:]
    for argument in arguments {
      if let value = argument.value { values[argument.key.uppercased()] = value }
    }
    guard let progressText = values["PROGRESS"], let progress = Int(progressText) else {
      return nil
    }
    let phase = BootstrapPhase(
      progress: progress, tag: values["TAG"] ?? "", summary: values["SUMMARY"] ?? "")
    self.phase = phase
    if severity == "WARN" {
      problem = BootstrapWarning(
        phase: phase, warning: values["WARNING"] ?? "", reason: values["REASON"] ?? "",
        count: Int(values["COUNT"] ?? "") ?? 0, recommendation: values["RECOMMENDATION"] ?? "",
        hostID: values["HOSTID"] ?? "?", hostAddress: values["HOSTADDR"] ?? "?")
    } else {
      problem = nil
    }
  }
}
