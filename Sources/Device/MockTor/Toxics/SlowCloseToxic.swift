/// slow_close=MS: when the destination closes, waits MS ms before closing towards the client.
public struct SlowCloseToxic: StreamToxic, Equatable {
  public static let name = "slow_close"
  public static let valueName: String? = "MS"
  public static let summary = "hold the close towards the client MS ms after the destination's"

  public let seconds: Double

  public init(seconds: Double) { self.seconds = seconds }

  public init(value: String?, name: String) throws(ToxicValueError) {
    seconds = try ToxicValueError.number(value, name: name, unit: "milliseconds") / 1000
  }

  public var directions: Set<StreamDirection> { [.downstream] }

  public func delayBeforeClosing(_ direction: StreamDirection) -> Double {
    direction == .downstream ? seconds : 0
  }

  public var description: String { "slow_close=\(Int(seconds * 1000))" }
}
