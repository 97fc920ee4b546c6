/// One row of C tor's bootstrap phase table: the percentage it reports, the machine-readable tag
/// and the human summary, exactly as tor 0.4.9 prints them in "Bootstrapped N% (tag): summary"
/// and in `BOOTSTRAP PROGRESS=N TAG=tag SUMMARY="summary"` (src/feature/control/
/// control_bootstrap.c `boot_to_str_tab`, percentages from control_events.h
/// `bootstrap_status_t`).
public struct BootstrapPhase: Hashable, Sendable, CustomStringConvertible {
  public let progress: Int
  public let tag: String
  public let summary: String

  public init(progress: Int, tag: String, summary: String) {
    self.progress = progress
    self.tag = tag
    self.summary = summary
  }

  public var description: String { "\(progress)% (\(tag)): \(summary)" }

  /// Every phase tor defines, in order. The `_pt` and `_proxy` rows are only reached with
  /// pluggable transports or an upstream proxy.
  public static let all: [BootstrapPhase] = [
    .init(progress: 0, tag: "starting", summary: "Starting"),
    .init(progress: 1, tag: "conn_pt", summary: "Connecting to pluggable transport"),
    .init(progress: 2, tag: "conn_done_pt", summary: "Connected to pluggable transport"),
    .init(progress: 3, tag: "conn_proxy", summary: "Connecting to proxy"),
    .init(progress: 4, tag: "conn_done_proxy", summary: "Connected to proxy"),
    .init(progress: 5, tag: "conn", summary: "Connecting to a relay"),
    .init(progress: 10, tag: "conn_done", summary: "Connected to a relay"),
    .init(progress: 14, tag: "handshake", summary: "Handshaking with a relay"),
    .init(progress: 15, tag: "handshake_done", summary: "Handshake with a relay done"),
    .init(
      progress: 20, tag: "onehop_create",
      summary: "Establishing an encrypted directory connection"),
    .init(progress: 25, tag: "requesting_status", summary: "Asking for networkstatus consensus"),
    .init(progress: 30, tag: "loading_status", summary: "Loading networkstatus consensus"),
    .init(progress: 40, tag: "loading_keys", summary: "Loading authority key certs"),
    .init(progress: 45, tag: "requesting_descriptors", summary: "Asking for relay descriptors"),
    .init(progress: 50, tag: "loading_descriptors", summary: "Loading relay descriptors"),
    .init(
      progress: 75, tag: "enough_dirinfo",
      summary: "Loaded enough directory info to build circuits"),
    .init(
      progress: 76, tag: "ap_conn_pt",
      summary: "Connecting to pluggable transport to build circuits"),
    .init(
      progress: 77, tag: "ap_conn_done_pt",
      summary: "Connected to pluggable transport to build circuits"),
    .init(progress: 78, tag: "ap_conn_proxy", summary: "Connecting to proxy to build circuits"),
    .init(
      progress: 79, tag: "ap_conn_done_proxy", summary: "Connected to proxy to build circuits"),
    .init(progress: 80, tag: "ap_conn", summary: "Connecting to a relay to build circuits"),
    .init(progress: 85, tag: "ap_conn_done", summary: "Connected to a relay to build circuits"),
    .init(
      progress: 89, tag: "ap_handshake",
      summary: "Finishing handshake with a relay to build circuits"),
    .init(
      progress: 90, tag: "ap_handshake_done",
      summary: "Handshake finished with a relay to build circuits"),
    .init(progress: 95, tag: "circuit_create", summary: "Establishing a Tor circuit"),
    .init(progress: 100, tag: "done", summary: "Done"),
  ]

  /// The phases a client without bridges or proxies walks through, as in a typical notice log.
  public static let direct: [BootstrapPhase] = all.filter {
    !$0.tag.hasSuffix("_pt") && !$0.tag.hasSuffix("_proxy")
  }

  public static func named(_ tag: String) -> BootstrapPhase? {
    all.first { $0.tag == tag }
  }

  public static let starting = all[0]
  public static let done = all[all.count - 1]
}
