import FailClosedSupport
import Foundation
import Lanes
import Sandbox
import Scenarios

/// Runs a soak's phases back to back in this one process, through the code paths
/// `leak-audit` and `exec` use (``MockLaneBatch`` with a ``ScenarioRunner``, a
/// ``RealLaneRunner`` on one private network, ``SandboxExec``), and samples after every run
/// (``ResourceSampler``). Stops between runs once `plan.maxMinutes` have passed.
struct SoakRunner: Sendable {
  /// What the runs gave.
  struct Outcome: Sendable {
    var samples: [SoakSample] = []
    /// Why the soak stopped before its last planned run (the time bound), if it did.
    var stopped: String?
    /// A set-up that failed (the real lane's network): the soak's exit is then 2.
    var setupError: String?
  }

  let plan: SoakPlan
  /// The `failclosed` binary the device runs as `mock-tor` and `app`.
  let executable: String
  /// Where the real lane keeps its network's files (each run's own are removed after it).
  let workDirectory: String
  let sampler: ResourceSampler
  /// Real seconds a count may take to come back after a run (the kernel destroys a
  /// namespace, and the links in it, after `ip netns del` returns).
  var settleSeconds = 3.0
  /// Told of each sample as it is taken.
  var onSample: @Sendable (SoakSample, _ reference: ResourceCounts?) -> Void = { _, _ in }

  func run() async -> Outcome {
    let state = SoakState(plan: plan, sampler: sampler, settle: settleSeconds, onSample: onSample)
    await SoakWarmUp.prepare()
    await state.sample(.start)
    defer { state.releaseCanary() }
    if plan.mock > 0 { await runMock(state) }
    if plan.real > 0, state.stopped == nil { await runReal(state) }
    if plan.exec > 0, state.stopped == nil { await runExec(state) }
    return state.outcome
  }

  func runMock(_ state: SoakState) async {
    let runner = ScenarioRunner(options: .init(executable: executable, timeScale: 25))
    for run in 1...plan.mock {
      guard state.mayStart(.mock, run: run) else { return }
      let scenario = SoakPlan.scenario(run: run, of: plan.mockLibrary)
      let wall = SystemClock()
      let result = await MockLaneBatch.run([scenario], runner: runner, jobs: 1).first
      await state.sample(
        .run, phase: .mock, run: run, scenario: scenario.name,
        verdict: result?.verdict.rawValue ?? "none", why: result.flatMap(Self.why),
        runSeconds: wall.now)
    }
  }

  func runReal(_ state: SoakState) async {
    let directory = workDirectory + "/real"
    let options = RealLaneRunner.Options(executable: executable)
    do {
      try await withSandbox { sandbox in
        let runner = RealLaneRunner(sandbox: sandbox, directory: directory, options: options)
        defer { runner.stop() }
        do {
          _ = try await runner.start(slots: 1)
        } catch {
          throw SoakSetupError(
            message: "the real-Tor lane's private network did not start: \(error)")
        }
        let kept = try await BlockingIO.run("soak.list") {
          Set(ResourceSampler.names(in: directory))
        }
        await state.sample(.setUp, phase: .real)
        for run in 1...plan.real {
          guard state.mayStart(.real, run: run) else { return }
          let scenario = SoakPlan.scenario(run: run, of: plan.realLibrary)
          let wall = SystemClock()
          let outcome = await runner.runAll([scenario]).first
          let result = outcome.map { ScenarioResult(scenario: scenario, outcome: $0) }
          await state.sample(
            .run, phase: .real, run: run, scenario: scenario.name,
            verdict: result?.verdict.rawValue ?? "none", why: result.flatMap(Self.why),
            runSeconds: wall.now)
          // The run's own directory (its tor's data and logs): a soak keeps no evidence of
          // each run, and 100 runs of it would fill a disk.
          _ = try? await BlockingIO.run("soak.clean") {
            for name in ResourceSampler.names(in: directory) where !kept.contains(name) {
              try? FileManager.default.removeItem(atPath: directory + "/" + name)
            }
          }
        }
      }
    } catch {
      state.fail("\(error)")
    }
    _ = try? await BlockingIO.run("soak.clean") {
      try FileManager.default.removeItem(atPath: directory)
    }
    await state.sample(.tornDown, phase: .real)
  }

  func runExec(_ state: SoakState) async {
    let name = "exec " + plan.execCommand.joined(separator: " ")
    for run in 1...plan.exec {
      guard state.mayStart(.exec, run: run) else { return }
      let wall = SystemClock()
      var options = SandboxExec.Options(command: plan.execCommand, grace: 0.5, timeout: 60)
      options.commandOutput = "/dev/null"
      let verdict: String
      do {
        let result = try await SandboxExec.run(options)
        verdict = result.report.verdict.rawValue
      } catch {
        verdict = "setup error"
        FailClosedMain.printError("failclosed soak: exec run \(run): \(error)")
      }
      await state.sample(
        .run, phase: .exec, run: run, scenario: name, verdict: verdict, runSeconds: wall.now)
    }
  }

  /// Why a run did not pass, in the judge's words (its reasons, its failed expectations, the
  /// runs set aside as late); nil for a pass.
  static func why(_ result: ScenarioResult) -> [String]? {
    guard result.verdict != .pass else { return nil }
    let judgement = result.judgement
    let failed = judgement.expectations.filter { $0.status != .met }.map {
      "\($0.expectation.kind) \($0.status.rawValue): \($0.reason)"
    }
    let earlier = result.outcome.earlierRuns.count
    // The run's error first (an app that aborted says its status only there).
    let runError = result.outcome.runError.map { ["run error: \($0)"] } ?? []
    return Array(
      (runError + judgement.reasons + failed
        + (earlier > 0 ? ["\(earlier) earlier run(s) set aside"] : [])).prefix(6))
  }
}
