import Foundation

/// Polls `condition` every `interval` seconds of real time until it holds or `timeout` seconds
/// pass; whether it held. For waiting on the event itself (a packet seen, a process gone, a
/// state reached) instead of sleeping for a guessed time: the bound only matters when the
/// event never comes, so it is generous. (Disfavoured: async code gets the suspending one
/// below, which would otherwise lose to this one for a closure that does not await.)
@_disfavoredOverload
public func waitUntil(
  timeout: Double = 10, every interval: Double = 0.02, _ condition: () throws -> Bool
) rethrows -> Bool {
  let deadline = ContinuousClock.now + .seconds(timeout)
  while ContinuousClock.now < deadline {
    if try condition() { return true }
    usleep(useconds_t(interval * 1_000_000))
  }
  return try condition()
}

/// The same from async code: it suspends between polls instead of blocking a thread of the
/// cooperative pool (two on this machine), and runs `condition` in the caller's isolation (an
/// actor's state can be read directly).
public func waitUntil(
  timeout: Double = 10, every interval: Double = 0.02,
  isolation: isolated (any Actor)? = #isolation, _ condition: () async throws -> Bool
) async rethrows -> Bool {
  let deadline = ContinuousClock.now + .seconds(timeout)
  while ContinuousClock.now < deadline {
    if try await condition() { return true }
    try? await Task.sleep(for: .seconds(interval))
  }
  return try await condition()
}
