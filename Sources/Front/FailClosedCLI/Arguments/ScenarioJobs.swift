import Foundation

/// How many scenarios run side by side when `--jobs` is not given. A scenario of the model
/// mostly waits on its scaled clock (the mock, the app and the pipeline sleep between steps), so
/// three per core keep the cores busy without starving the clock: the 32-file mock library took
/// 77 s at 2 jobs, 39 s at 4 and 28 s at 6 on two cores, every run 32 of 32 with the stall
/// posted at 75.04-75.16 s (issue 17's goal: the whole mock lane within 30 s). A system that
/// waits in real time (bitchat's own code) costs little CPU per run: 6 at a time kept two cores
/// 95% idle, so all its scenarios run at once, up to ``realTimeMaximum``.
enum ScenarioJobs {
  static let perCore = 3
  static let maximum = 32
  static let realTimeMaximum = 32

  static var defaultCount: Int {
    min(maximum, max(2, perCore * ProcessInfo.processInfo.activeProcessorCount))
  }

  /// Without `--jobs`: a few per core, or for a system that waits in real time every scenario
  /// of a lane at once.
  static func defaultCount(waitsInRealTime: Bool, scenarios: Int) -> Int {
    waitsInRealTime ? max(1, min(realTimeMaximum, scenarios)) : defaultCount
  }

  static var helpText: String { "(default \(perCore) per core: \(defaultCount) here)" }

  /// leak-audit's, which knows the systems that wait in real time.
  static var leakAuditHelpText: String {
    "(default \(perCore) per core: \(defaultCount) here; bitchat-source, which waits in real "
      + "time: every scenario of a lane at once, at most \(realTimeMaximum))"
  }
}
