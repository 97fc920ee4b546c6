/// latency=MS: delays the reply and every chunk towards the client.
public struct LatencyToxic: StreamToxic, Equatable {
  public static let name = "latency"
  public static let valueName: String? = "MS"
  public static let summary = "delay the reply and each chunk towards the client"

  public let seconds: Double

  public init(seconds: Double) { self.seconds = seconds }

  public init(value: String?, name: String) throws(ToxicValueError) {
    seconds = try ToxicValueError.number(value, name: name, unit: "milliseconds") / 1000
  }

  public var directions: Set<StreamDirection> { [.downstream] }
  public var delayBeforeAnswer: Double { seconds }

  public func delay(before count: Int, _ direction: StreamDirection) -> Double {
    direction == .downstream ? seconds : 0
  }

  public var description: String { "latency=\(Int(seconds * 1000))" }
}
