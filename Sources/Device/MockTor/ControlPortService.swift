import FailClosedSupport
import Foundation
import TorControl

/// A ctor control port ready to run from text options (what `failclosed mock-tor
/// --control-port PORT --control-auth SPEC` hands over): a ``BootstrapDriver`` for the plan,
/// a ``ControlPortListener`` on 127.0.0.1:PORT, and every bootstrap step and control command
/// reported to `log` as ("control_bootstrap" | "control", time, fields).
public final class ControlPortService: @unchecked Sendable {
  public typealias Log =
    @Sendable (_ event: String, _ time: Double, _ fields: [String: String]) ->
    Void

  public let driver: BootstrapDriver
  public let listener: ControlPortListener
  public var address: SocketAddress { listener.address }

  /// - Parameters:
  ///   - plan: a ``BootstrapPlan`` spelling (healthy:5, stall:conn:refused, ...).
  ///   - auth: `none`, `password:SECRET` or `cookie:FILE` (FILE is written, like tor's).
  ///   - disableNetwork: start as tor with DisableNetwork 1 (the bootstrap waits for SETCONF).
  ///   - onSignal: called for every SIGNAL (e.g. to stop the mock on SHUTDOWN).
  ///   - origin: the clock's time of plan time 0 and of the log's 0 (the run's epoch, 0, when
  ///     the mock has one); nil: now.
  /// Errors name the option at fault (`--bootstrap-plan`, `--control-auth`, `--control-port`).
  public init(
    port: UInt16, auth: String, plan: String, clock: any HarnessClock,
    socksListeners: [String] = [], disableNetwork: Bool = false, log: Log? = nil,
    onSignal: (@Sendable (String) -> Void)? = nil, origin: Double? = nil
  ) throws {
    let bootstrapPlan: BootstrapPlan
    do { bootstrapPlan = try BootstrapPlan(parsing: plan) } catch {
      throw ControlPortServiceError(option: "bootstrap-plan", message: "\(error)")
    }
    let authentication: ControlAuthentication
    do {
      authentication = try ControlPortCookie.authentication(
        for: try ControlAuthentication.Spec(parsing: auth))
    } catch {
      throw ControlPortServiceError(option: "control-auth", message: "\(error)")
    }
    let origin = origin ?? clock.now
    let hooks = BootstrapDriver.Hooks(
      event: { event in
        guard let log else { return }
        log("control_bootstrap", event.time, ControlPortService.fields(for: event))
      },
      command: { record, peer in
        log?(
          "control", clock.now - origin,
          [
            "command": record.keyword, "arguments": record.arguments,
            "reply": String(record.replyCode), "peer": peer?.description ?? "?",
          ])
      },
      signal: onSignal)
    driver = BootstrapDriver(
      simulator: BootstrapSimulator(plan: bootstrapPlan, personality: .ctor), clock: clock,
      origin: origin, disableNetwork: disableNetwork, socksListeners: socksListeners,
      hooks: hooks)
    do {
      listener = try ControlPortListener(
        address: SocketAddress(host: "127.0.0.1", port: port)!,
        authentication: authentication, backend: driver)
    } catch {
      throw ControlPortServiceError(option: "control-port", message: "\(error)")
    }
    driver.attach(listener)
  }

  public func start() {
    listener.start()
    driver.start()
  }

  public func stop() {
    driver.stop()
    listener.stop()
  }

  static func fields(for event: BootstrapEvent) -> [String: String] {
    switch event.kind {
    case .progress(let phase):
      return ["progress": String(phase.progress), "tag": phase.tag, "summary": phase.summary]
    case .warning(let warning):
      return [
        "progress": String(warning.phase.progress), "tag": warning.phase.tag,
        "warning": warning.warning, "reason": warning.reason, "count": String(warning.count),
        "recommendation": warning.recommendation, "hostaddr": warning.hostAddress,
      ]
    case .networkUp: return ["network": "up"]
    case .networkDown(let reason): return ["network": "down", "reason": reason]
    case .crashed: return ["crashed": "true"]
    }
  }
}

/// A control-port option that could not be used; `option` is the CLI option at fault.
public struct ControlPortServiceError: Error, CustomStringConvertible, Sendable {
  public let option: String
  public let message: String
  public var description: String { "--\(option): \(message)" }
}
