import Foundation

/// How many scenarios run side by side when `--jobs` is not given. A scenario mostly waits on
/// its scaled clock (the mock, the app and the pipeline sleep between steps), so three per core
/// keep the cores busy without starving the clock: the 32-file mock library took 77 s at 2 jobs,
/// 39 s at 4 and 28 s at 6 on two cores, every run 32 of 32 with the stall posted at
/// 75.04-75.16 s (issue 17's goal: the whole mock lane within 30 s).
enum ScenarioJobs {
  static let perCore = 3
  static let maximum = 16

  static var defaultCount: Int {
    min(maximum, max(2, perCore * ProcessInfo.processInfo.activeProcessorCount))
  }

  static var helpText: String { "(default \(perCore) per core: \(defaultCount) here)" }
}
