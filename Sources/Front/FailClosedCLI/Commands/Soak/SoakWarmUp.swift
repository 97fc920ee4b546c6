import FailClosedSupport
import Foundation
import Lanes
import Sandbox

/// What a harness process makes once and keeps for its whole life, made before the soak's
/// start sample so that the start holds it and a run is held to adding nothing: the signal
/// teardown's pipe and thread (``SignalTeardown``, armed by the first sandbox), the runtime's
/// timer descriptor (its first sleep) and the mock lane's runs directory (its first run),
/// and the leftovers of crashed runs reaped (``Reaper``, as every sandbox's start does).
enum SoakWarmUp {
  static func prepare() async {
    _ = try? await BlockingIO.run("soak.warm-up") {
      Reaper.reap()
      SignalTeardown.arm()
      try? FileManager.default.createDirectory(
        atPath: MockLane.runsDirectory, withIntermediateDirectories: true)
    }
    try? await Task.sleep(nanoseconds: 1_000_000)
  }
}
