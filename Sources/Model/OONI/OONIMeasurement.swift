/// One OONI measurement of Tor, as the probe recorded it: the envelope (where, when, which
/// probe) and the test's keys. Every field keeps OONI's meaning; nothing is interpreted here.
public struct OONIMeasurement: Sendable, Equatable {
  /// Where it was read from, for messages and provenance.
  public var file: String
  public var line: Int
  public var testName: String
  public var testVersion: String
  public var probeCC: String
  public var probeASN: String
  public var probeNetworkName: String?
  /// `measurement_start_time`, "YYYY-MM-DD hh:mm:ss" UTC.
  public var startTime: String
  /// `test_runtime` in seconds.
  public var runtime: Double?
  /// Empty or absent when the measurement was never submitted (a developer run).
  public var reportID: String?
  public var softwareName: String?
  public var softwareVersion: String?
  /// `annotations` (engine_version, platform, ...).
  public var annotations: [String: String]
  public var keys: TestKeys

  public enum TestKeys: Sendable, Equatable {
    /// `tor` (ts-023): reachability of directory authorities and bridges.
    case tor(TorTestKeys)
    /// `vanilla_tor` (ts-016) and `torsf` (ts-030): where tor's bootstrap stopped.
    case bootstrap(BootstrapTestKeys)
    /// Any other test (e.g. `stun_reachability`): read, not converted.
    case other
  }

  /// "2023-01-21".
  public var date: String { String(startTime.prefix(10)) }

  /// "RU 2023-01-21 AS197467": how provenance lines name the measurement.
  public var label: String { "\(probeCC) \(date) \(probeASN)" }
}

/// `tor`'s test keys.
public struct TorTestKeys: Sendable, Equatable {
  public enum Shape: String, Sendable { case list, map }
  /// `targets` was a list in test_version 0.0.1 (2020-01-10/12), a map since.
  public var shape: Shape
  /// `<protocol>_total` / `_accessible`, when the probe wrote them (test_version >= 0.1.0).
  public var totals: [String: Totals]
  public var targets: [TorTarget]

  public struct Totals: Sendable, Equatable {
    public var total: Int
    public var accessible: Int
  }
}

/// One target of the `tor` test and what happened at each step.
public struct TorTarget: Sendable, Equatable {
  /// What one step recorded: not recorded at all, succeeded, or failed with OONI's string.
  public enum Step: Sendable, Equatable {
    case notRecorded
    case succeeded
    case failed(String)

    public var failure: String? {
      if case .failed(let text) = self { return text }
      return nil
    }
  }

  public var id: String
  public var address: String
  /// The directory authority's nickname (test_version >= 0.1.0 for dirauths).
  public var name: String?
  /// `target_protocol`: `or_port_dirauth`, `dir_port`, `or_port`, `obfs4`, ...
  public var protocolName: String
  /// Non-empty for private bridges (address scrubbed).
  public var source: String?
  /// The target's overall `failure` (nil: reachable).
  public var failure: String?
  /// `failure: false` marks a target that was not run (the backend skips it).
  public var notRun: Bool
  /// The TCP connect (summary.connect, the first tcp_connect, or a failed connect event).
  public var connect: Step
  /// The TLS or obfs4 handshake (summary.handshake or the first tls_handshake).
  public var handshake: Step
  /// The HTTP request (dir_port only).
  public var request: Step

  /// True when the address is IPv6 ("[2a0c:...]:27015").
  public var isIPv6: Bool { address.hasPrefix("[") }
}

/// `vanilla_tor` and `torsf`'s test keys, every version: the Go probe's (0.2.0+), the Python
/// probe's legacy format (one `tor_log` string) and torsf 0.1.0's two keys.
public struct BootstrapTestKeys: Sendable, Equatable {
  /// `vanilla` or `snowflake` (from `transport_name`, or from the test's name).
  public var transport: String
  public var success: Bool?
  public var failure: String?
  /// `timeout-reached`, `unknown-error` or null.
  public var error: String?
  public var bootstrapTime: Double?
  public var timeout: Double?
  public var progress: Int?
  public var tag: String?
  public var summary: String?
  public var torVersion: String?
  /// tor's log lines (`tor_logs`, or the legacy `tor_log` split into lines); nil when the
  /// measurement has none (absent or null).
  public var logs: [String]?
  /// True for the legacy Python format (`tor_log`, one string).
  public var legacyLog: Bool
}
