import Foundation

/// What the program launcher's events say of one black-box run (``ScenarioEventCatalogue/programEvents``):
/// when it started, how it ended, what it printed, whether its success file appeared. The
/// program expectations judge these against ``ProgramSpec/Success``.
struct ProgramRun {
  var started: Double?
  var startedHow: String?
  var exit: (time: Double, status: Int)?
  var killed: Double?
  var output: [String] = []
  var files: Set<String> = []
  var error: String?

  init(_ events: [ScenarioEvent]) {
    for event in events {
      let value = event.fields["value"] ?? ""
      switch event.name {
      case "program.started":
        started = event.time
        startedHow = value
      case "program.exit": exit = (event.time, Int(value) ?? -1)
      case "program.killed": killed = event.time
      case "program.output": output.append(value)
      case "program.file": files.insert(value)
      case "program.error": error = value
      default: break
      }
    }
  }

  /// Which parts of `success` failed, in words; empty when it succeeded. Nil when the program
  /// never started (nothing can be said of it).
  func shortfall(of success: ProgramSpec.Success) -> [String]? {
    guard started != nil else { return nil }
    var missing: [String] = []
    if let want = success.exit {
      if let exit {
        if exit.status != want { missing.append("it exited with status \(exit.status)") }
      } else {
        missing.append("it was still running at the end (killed at \(Self.seconds(killed)))")
      }
    } else if exit == nil {
      missing.append("it was still running at the end (killed at \(Self.seconds(killed)))")
    }
    if let pattern = success.output {
      // The pattern compiled when the file was parsed (none: not a regular expression).
      let compiled = success.outputPattern
      if !output.contains(where: { compiled?.matchesPart(of: $0) ?? false }) {
        missing.append("no line of its output matched '\(pattern)'")
      }
    }
    if let file = success.file, !files.contains(file) { missing.append("\(file) was not written") }
    return missing
  }

  /// "exited 0 at 5.2 s" / "killed at 60 s".
  var ending: String {
    if let exit { return "exited \(exit.status) at \(Self.seconds(exit.time))" }
    if let killed { return "still running, killed at \(Self.seconds(killed))" }
    return "no end recorded"
  }

  /// Why nothing can be judged: it never started (with the launcher's reason).
  var notStarted: String {
    "the program never started" + (error.map { ": \($0)" } ?? "")
  }

  static func seconds(_ t: Double?) -> String {
    t.map { ExpectationJudge.seconds($0) } ?? "the end"
  }
}

extension ExpectationFacts {
  /// The success this scenario's program is held to: the expectation's own parts, else the
  /// program's profile, else exit 0.
  func success(overriding own: ProgramSpec.Success?) -> ProgramSpec.Success {
    own ?? scenario.app.program?.success ?? ProgramSpec.Success()
  }
}
