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
        verdict: result?.verdict.rawValue ?? "none", runSeconds: wall.now)
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
          let verdict = outcome.map { ScenarioResult(scenario: scenario, outcome: $0).verdict }
          await state.sample(
            .run, phase: .real, run: run, scenario: scenario.name,
            verdict: verdict?.rawValue ?? "none", runSeconds: wall.now)
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
}

/// A set-up the soak could not make.
struct SoakSetupError: Error, CustomStringConvertible {
  let message: String
  var description: String { message }
}

/// The soak's samples as they are taken, its clock, its bound and its canary.
final class SoakState: @unchecked Sendable {
  private let lock = NSLock()
  private var samples: [SoakSample] = []
  private var stopReason: String?
  private var setupError: String?
  private var release: (@Sendable () -> Void)?
  private var canaryLeaked = false
  let plan: SoakPlan
  let sampler: ResourceSampler
  let settle: Double
  let clock = SystemClock()
  let onSample: @Sendable (SoakSample, ResourceCounts?) -> Void

  init(
    plan: SoakPlan, sampler: ResourceSampler, settle: Double,
    onSample: @escaping @Sendable (SoakSample, ResourceCounts?) -> Void
  ) {
    self.plan = plan
    self.sampler = sampler
    self.settle = settle
    self.onSample = onSample
  }

  var outcome: SoakRunner.Outcome {
    lock.withLock { .init(samples: samples, stopped: stopReason, setupError: setupError) }
  }
  var stopped: String? { lock.withLock { stopReason } }

  func fail(_ reason: String) {
    lock.withLock { setupError = setupError ?? reason }
    FailClosedMain.printError("failclosed soak: \(reason)")
  }

  /// False once the time bound has passed (said once, with where the soak stopped).
  func mayStart(_ phase: SoakPhase, run: Int) -> Bool {
    let limit = plan.maxMinutes * 60
    guard clock.now >= limit else { return true }
    lock.withLock {
      if stopReason == nil {
        stopReason =
          "stopped at --max-minutes \(Self.number(plan.maxMinutes)) before \(phase.rawValue) run "
          + "\(run); the runs after it did not run"
      }
    }
    return false
  }

  /// Takes a sample; at a run, once its counts differ from what the judge holds them to, reads
  /// again every 0.1 s for up to `settle` seconds (the kernel's own teardown is asynchronous).
  /// After the first run, leaks the canary.
  func sample(
    _ point: SoakSample.Point, phase: SoakPhase? = nil, run: Int? = nil, scenario: String? = nil,
    verdict: String? = nil, runSeconds: Double? = nil
  ) async {
    let sampler = self.sampler
    let started = SystemClock()
    var reading = await Self.read(sampler)
    var sample = SoakSample(
      point: point, phase: phase, run: run, scenario: scenario, verdict: verdict,
      runSeconds: runSeconds, counts: reading.counts, rssKiB: reading.rssKiB,
      threads: reading.threads, descriptorKinds: reading.descriptorKinds, capped: reading.capped,
      elapsedSeconds: clock.now)
    let earlier = lock.withLock { samples }
    let reference = SoakJudge.references(earlier + [sample]).last ?? nil
    while let reference, reading.counts != reference, started.now < settle {
      try? await Task.sleep(nanoseconds: 100_000_000)
      reading = await Self.read(sampler)
    }
    sample.counts = reading.counts
    sample.rssKiB = reading.rssKiB
    sample.threads = reading.threads
    sample.capped = reading.capped
    sample.descriptorKinds = reading.descriptorKinds
    sample.settleMilliseconds = Int(started.now * 1000)
    sample.elapsedSeconds = clock.now
    lock.withLock { samples.append(sample) }
    onSample(sample, reference)
    if point == .run, let canary = plan.canary, !lock.withLock({ canaryLeaked }) {
      lock.withLock { canaryLeaked = true }
      do {
        let releaser = try await BlockingIO.run("soak.canary") { try canary.leak() }
        lock.withLock { release = releaser }
        print("soak: canary: leaked one \(canary.rawValue) after the first run")
      } catch {
        fail("--canary-leak \(canary.rawValue): \(error)")
      }
    }
  }

  func releaseCanary() {
    let releaser = lock.withLock { release }
    releaser?()
  }

  static func read(_ sampler: ResourceSampler) async -> ResourceSampler.Reading {
    (try? await BlockingIO.run("soak.sample") { sampler.read() })
      ?? ResourceSampler.Reading(counts: ResourceCounts(), rssKiB: 0, threads: 0)
  }

  static func number(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }
}
