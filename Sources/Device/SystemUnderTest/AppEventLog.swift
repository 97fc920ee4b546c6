import FailClosedSupport
import Foundation

/// Where the modelled app reports everything it does: kept in memory for tests and handed to a
/// sink (the driver's stdout writer). Timestamps come from the app's clock.
public final class AppEventLog: @unchecked Sendable {
  private let lock = NSLock()
  private var recorded: [AppEvent] = []
  private let clock: any HarnessClock
  private let origin: Double
  private let sink: (@Sendable (AppEvent) -> Void)?

  /// Events are stamped in seconds since `origin` on `clock` (nil: the clock's time now).
  public init(
    clock: any HarnessClock, origin: Double? = nil, sink: (@Sendable (AppEvent) -> Void)? = nil
  ) {
    self.clock = clock
    self.origin = origin ?? clock.now
    self.sink = sink
  }

  public func record(_ kind: AppEvent.Kind, _ fields: [String: EventValue]) {
    let event = AppEvent(time: clock.now - origin, kind: kind, fields: fields)
    lock.withLock { recorded.append(event) }
    sink?(event)
  }

  public var events: [AppEvent] { lock.withLock { recorded } }

  public func events(_ kind: AppEvent.Kind) -> [AppEvent] { events.filter { $0.kind == kind } }

  /// Names of the notifications posted so far, in order.
  public var notificationNames: [String] {
    events(.notification).compactMap { $0["name"]?.description }
  }

  /// Endpoints of every socket opened so far, in order.
  public var socketEndpoints: [String] {
    events(.socket).compactMap { $0["endpoint"]?.description }
  }

  func state(_ component: String, _ field: String, _ value: EventValue) {
    record(.state, ["component": .string(component), "field": .string(field), "value": value])
  }
}
