import SOCKS

/// Faults applied to the streams of one destination, in toxiproxy's vocabulary. Spelled as
/// comma-separated toxics, e.g. "latency=200,bandwidth=64" or "reply=0xf2":
///
///     reply=CODE        answer the request with this SOCKS reply code (0x01-0x08, f0-f7)
///     latency=MS        delay the reply and every chunk towards the client by MS ms
///     bandwidth=KBPS    limit the flow towards the client to KBPS kilobytes per second
///     reset_after=BYTES send a TCP RST once BYTES have flowed (both directions counted)
///     blackhole         accept the request but never answer; swallow what the client sends
///                       (toxiproxy's timeout=0)
///     slow_close=MS     when the destination closes, wait MS ms before closing the client
public struct StreamFault: Hashable, Sendable, CustomStringConvertible {
  public var reply: SOCKSReplyCode?
  public var latency: Double = 0
  /// Bytes per second; nil = unlimited.
  public var bandwidth: Int?
  public var resetAfterBytes: Int?
  public var blackhole = false
  public var slowClose: Double = 0

  public init(
    reply: SOCKSReplyCode? = nil, latency: Double = 0, bandwidth: Int? = nil,
    resetAfterBytes: Int? = nil, blackhole: Bool = false, slowClose: Double = 0
  ) {
    self.reply = reply
    self.latency = latency
    self.bandwidth = bandwidth
    self.resetAfterBytes = resetAfterBytes
    self.blackhole = blackhole
    self.slowClose = slowClose
  }

  public init(parsing spec: String) throws(MockTorError) {
    guard !spec.isEmpty else { throw MockTorError.badFault(spec: spec, reason: "empty") }
    for toxic in spec.split(separator: ",", omittingEmptySubsequences: false) {
      let parts = toxic.split(separator: "=", maxSplits: 1).map(String.init)
      let name = parts.first?.lowercased() ?? ""
      let value = parts.count > 1 ? parts[1] : nil
      func number(_ unit: String) throws(MockTorError) -> Double {
        guard let value, let number = Double(value), number >= 0, number.isFinite else {
          throw MockTorError.badFault(
            spec: spec, reason: "\(name) needs a number of \(unit) >= 0, got '\(value ?? "")'")
        }
        return number
      }
      switch name {
      case "reply":
        guard let value, let code = SOCKSReplyCode(text: value), code != .succeeded else {
          throw MockTorError.badFault(
            spec: spec,
            reason: "reply needs a failure code 0x01-0x08 or f0-f7, got '\(value ?? "")'")
        }
        reply = code
      case "latency": latency = try number("milliseconds") / 1000
      case "bandwidth": bandwidth = max(1, Int(try number("kilobytes per second") * 1024))
      case "reset_after", "reset_peer": resetAfterBytes = Int(try number("bytes"))
      case "blackhole", "timeout":
        if name == "timeout", let value, value != "0" {
          throw MockTorError.badFault(spec: spec, reason: "only timeout=0 (blackhole) is supported")
        }
        blackhole = true
      case "slow_close": slowClose = try number("milliseconds") / 1000
      default:
        throw MockTorError.badFault(
          spec: spec,
          reason: "unknown toxic '\(toxic)' (use reply, latency, bandwidth, reset_after, "
            + "blackhole, slow_close)")
      }
    }
  }

  public var description: String {
    var parts: [String] = []
    if let reply { parts.append("reply=0x" + String(reply.rawValue, radix: 16)) }
    if latency > 0 { parts.append("latency=\(Int(latency * 1000))") }
    if let bandwidth { parts.append("bandwidth=\(bandwidth / 1024)") }
    if let resetAfterBytes { parts.append("reset_after=\(resetAfterBytes)") }
    if blackhole { parts.append("blackhole") }
    if slowClose > 0 { parts.append("slow_close=\(Int(slowClose * 1000))") }
    return parts.joined(separator: ",")
  }
}
