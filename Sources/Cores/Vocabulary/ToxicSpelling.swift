/// One of the mock Tor's toxics as a fault kind is written in `failclosed mock-tor --fault
/// HOST=SPEC`: the toxic's name and, when it takes a value, the fault's field that value comes
/// from ("latency=200" from `ms`). The mock's toxic registry (MockTor's
/// `StreamToxics.registered`) reads it back; ScenariosTests hold every kind's spelling to it.
public struct ToxicSpelling: Sendable, Hashable {
  /// How the value is written: reply codes in hex, as the mock writes them back.
  public enum Notation: Sendable, Hashable {
    case decimal
    case hexadecimal
  }

  /// The toxic's name in the mock's registry ("reset_after").
  public let toxic: String
  /// The fault's field whose value follows "=", nil for a toxic written bare.
  public let valueField: String?
  public let notation: Notation

  public init(_ toxic: String, value valueField: String? = nil, _ notation: Notation = .decimal) {
    self.toxic = toxic
    self.valueField = valueField
    self.notation = notation
  }

  /// "latency=200", "reply=0xf2" or "blackhole". A value missing from `values` is written
  /// empty, so the mock refuses the spec instead of guessing a number.
  public func spec(_ values: [String: Int]) -> String {
    guard let valueField else { return toxic }
    let value = values[valueField].map { value in
      notation == .hexadecimal ? "0x" + String(value, radix: 16) : String(value)
    }
    return toxic + "=" + (value ?? "")
  }
}
