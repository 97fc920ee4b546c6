import FailClosedSupport
import Foundation

@testable import SystemUnderTest

/// A TorManager on virtual time with the simulated Arti backend, plus its event log.
@AppActor final class TorRig {
  let clock = ManualClock()
  let log: AppEventLog
  let bus: NotificationBus
  let arti: SimulatedArti
  let tor: TorManager

  init(bootstrapSeconds: Double? = 5, profile: SUTProfile = .bitchat) {
    log = AppEventLog(clock: clock)
    bus = NotificationBus(log: log)
    arti = SimulatedArti(scheduler: clock, bootstrapSeconds: bootstrapSeconds)
    tor = TorManager(
      backend: arti, probe: arti, scheduler: clock, bus: bus, log: log, profile: profile,
      dataDirectory: NSTemporaryDirectory() + "failclosed-sut-arti")
  }

  func notifications(_ name: String) -> Int {
    log.notificationNames.filter { $0 == name }.count
  }

  func advance(_ seconds: Double) { clock.advanceTimers(by: seconds) }

  func start() {
    tor.setAutoStartAllowed(true)
    tor.startIfNeeded()
    clock.advanceTimers(by: 0)
  }
}

/// Records the calls NetworkActivationService makes, in order.
@AppActor final class CallRecorder: ProxyModeSwitching, RelayConnectionControl {
  var calls: [String] = []
  var proxyModes: [Bool] = []
  func setProxyMode(useTor: Bool) {
    proxyModes.append(useTor)
    calls.append("setProxyMode(\(useTor))")
  }
  func connect() { calls.append("relays.connect") }
  func disconnect() { calls.append("relays.disconnect") }
}
