import FailClosedSupport
import Foundation

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
    verdict: String? = nil, why: [String]? = nil, runSeconds: Double? = nil
  ) async {
    let sampler = self.sampler
    let started = SystemClock()
    var reading = await Self.read(sampler)
    var sample = SoakSample(
      point: point, phase: phase, run: run, scenario: scenario, verdict: verdict,
      why: why, runSeconds: runSeconds, counts: reading.counts, rssKiB: reading.rssKiB,
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
