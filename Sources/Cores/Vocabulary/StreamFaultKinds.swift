/// Every stream fault kind, once (``StreamFaultKind``). A kind left out of this list cannot be
/// written in a scenario file; a kind the mock has a toxic for is one entry here. Tests send
/// each entry's fields, at the ends of their ranges, through the scenario parser and the
/// runner's command line into the mock's toxic parser, hold the schema and the guide to the
/// list, and add a kind in a test to show that an entry is all a new kind needs.
public enum StreamFaultKinds {
  public static let all: [StreamFaultKind] = [
    drop, reset, latency, blackhole, socksError, slowClose,
  ]

  /// The kind with this name in `kinds`.
  public static func kind(named name: String, in kinds: [StreamFaultKind] = all)
    -> StreamFaultKind?
  {
    kinds.first { $0.name == name }
  }

  // The fields kinds share (one meaning and range each; a test holds shared fields equal).

  public static let milliseconds = StreamFaultParameter(
    "ms", "a delay in milliseconds", in: [0...600_000])
  public static let byteCount = StreamFaultParameter(
    "afterBytes", "a byte count, both directions counted", in: [0...1_073_741_824])
  /// The codes the mock can send: SOCKS5's failures and Tor's onion-service extensions.
  public static let replyCode = StreamFaultParameter(
    "reply", "a SOCKS reply code", in: [0x01...0x08, 0xF0...0xF7])

  public static let drop = StreamFaultKind(
    "drop", "the request is never answered; what the app sends is swallowed",
    mock: [ToxicSpelling("blackhole")])
  public static let reset = StreamFaultKind(
    "reset", "the stream is reset (TCP RST) once more than `afterBytes` would have flowed",
    parameters: [byteCount.with(.optional(default: 0))],
    mock: [ToxicSpelling("reset_after", value: "afterBytes")])
  public static let latency = StreamFaultKind(
    "latency", "the reply and each chunk towards the app wait `ms`", parameters: [milliseconds],
    mock: [ToxicSpelling("latency", value: "ms")])
  public static let blackhole = StreamFaultKind(
    "blackhole",
    "the stream connects, then goes silent once more than `afterBytes` would have flowed: "
      + "nothing more passes either way, nothing closes",
    parameters: [byteCount], mock: [ToxicSpelling("blackhole", value: "afterBytes")])
  public static let socksError = StreamFaultKind(
    "socks-error", "the request is answered with SOCKS reply code `reply`, connecting nowhere",
    parameters: [replyCode], mock: [ToxicSpelling("reply", value: "reply", .hexadecimal)])
  public static let slowClose = StreamFaultKind(
    "slow-close", "the close towards the app waits `ms` after the destination's",
    parameters: [milliseconds], mock: [ToxicSpelling("slow_close", value: "ms")])
}
