import Foundation

/// The part of IPtProxyUI (tladesignz/IPtProxyUI-ios) Onion Browser's Tor layer uses, after
/// IPtProxyUI/Classes/Shared/Transport.swift and IpSupport.swift at 4.4.0
/// (6ff2c938265f4bda7fb0ec7a377049f72588a806, pinned by 3.X @44edf9a8) and 2.1.0
/// (f64533dfb69f2f716a69d1451e9b15e3185f75b2, pinned by 2.X @9a17dd4f); line numbers are
/// 4.4.0's unless said. IPtProxy (the pluggable transports in process, Go) becomes Debian's
/// obfs4proxy in managed mode, started by `start()`; no built-in bridges (BuiltInBridges'
/// public ones must never be used here): only the user's custom bridges, which the harness
/// seeds with its private network's bridge.
public enum Transport: Int, CaseIterable, Comparable {
  case none = 0
  case obfs4 = 1
  case snowflake = 2
  case custom = 3
  case snowflakeAmp = 4
  case onDemand = 5
  case meekAzure = 6

  /// l.14.
  public static let order: [Transport] = [
    .none, .obfs4, .snowflake, .snowflakeAmp, .meekAzure, .custom, .onDemand,
  ]

  /// l.16-18 (2.1.0 l.16-18 the same).
  public static func asArguments(key: String, value: String) -> [String] {
    ["--\(key)", value]
  }

  /// l.20-22 (2.1.0 l.20-22 the same): the value in double quotes.
  public static func asConf(key: String, value: String) -> [String: String] {
    ["key": key, "value": "\"\(value)\""]
  }

  /// l.35-37.
  public static func < (lhs: Transport, rhs: Transport) -> Bool {
    order.firstIndex(of: lhs) ?? lhs.rawValue < order.firstIndex(of: rhs) ?? rhs.rawValue
  }

  public var description: String { String(describing: self) }

  /// l.98-136 (2.1.0 l.84-108): obfs4-type transports start lyrebird/obfs4proxy; snowflake and
  /// meek have nothing here (no public broker may be contacted).
  public func start(log: Bool = false) {
    switch self {
    case .obfs4, .custom, .onDemand, .meekAzure: PluggableTransportProcess.shared.start()
    default: break
    }
  }

  /// l.138-149.
  public func stop() {
    switch self {
    case .obfs4, .custom, .onDemand, .meekAzure: PluggableTransportProcess.shared.stop()
    default: break
    }
  }

  /// l.151-203 (2.1.0 l.123-146): the ClientTransportPlugin at the transport's local SOCKS
  /// port and the bridge lines: custom ones from IPtProxyUI's Settings.customBridges;
  /// BuiltInBridges (public bridges) none.
  public func torConf<T>(_ cv: (String, String) -> T) -> [T] {
    var conf = [T]()
    switch self {
    case .obfs4, .custom, .onDemand:
      conf.append(
        cv(
          "ClientTransportPlugin", "obfs4 socks5 127.0.0.1:\(PluggableTransportProcess.shared.port)"
        ))
      if self == .custom, let customBridges = Settings.customBridges, !customBridges.isEmpty {
        conf += customBridges.map { cv("Bridge", $0) }
      }
    case .snowflake, .snowflakeAmp, .meekAzure:
      break
    default:
      break
    }
    return conf
  }
}

/// IPtProxyUI's own Settings (IPtProxyUI/Classes/Shared/Settings.swift at 4.4.0 l.12-45):
/// UserDefaults keys "transport" and "customBridges". 3.X's app Settings subclasses it.
open class Settings {
  open class var defaults: UserDefaults? { UserDefaults.standard }

  open class var transport: Transport {
    get { Transport(rawValue: defaults?.integer(forKey: "transport") ?? 0) ?? .none }
    set { defaults?.set(newValue.rawValue, forKey: "transport") }
  }

  open class var customBridges: [String]? {
    get { defaults?.stringArray(forKey: "customBridges") }
    set { defaults?.set(newValue, forKey: "customBridges") }
  }

  /// Where the transports keep their state (the driver points it into its state directory).
  nonisolated(unsafe) public static var stateLocation = FileManager.default.temporaryDirectory

  public init() {}
}

/// IpSupport.swift (4.4.0 l.11-189; 2.1.0 the same but one line): which IP stacks the device
/// has, told to every callback on a change. Reachability and getifaddrs become the driver's
/// path changes (`pathChanged(satisfied:)`): a satisfied path is an IPv4-only network (the
/// harness's device has IPv4 only), an unsatisfied one unavailable.
open class IpSupport {
  public enum Status {
    public static let asArguments = Transport.asArguments
    public static let asConf = Transport.asConf

    case dual
    case ipV4Only
    case ipV6Only
    case unavailable

    /// l.26-50.
    public func torConf<T>(_ transport: Transport, _ cv: (String, String) -> T) -> [T] {
      var conf = [T]()
      if self == .ipV6Only {
        conf.append(cv("ClientPreferIPv6ORPort", "1"))
        conf.append(cv("ClientUseIPv4", transport == .none ? "0" : "1"))
      } else {
        conf.append(cv("ClientPreferIPv6ORPort", "auto"))
        conf.append(cv("ClientUseIPv4", "1"))
      }
      conf.append(cv("ClientUseIPv6", "1"))
      return conf
    }
  }

  public typealias Changed = (Status) -> Void

  nonisolated(unsafe) public static var shared = IpSupport()

  public private(set) var status = Status.unavailable
  private var callbacks = [Changed]()
  private let queue = DispatchQueue(label: "IpSupport.reachability")

  private init() {}

  /// l.76-84: the callback is kept; starting the notifier reports the current status once
  /// (Reachability's startNotifier checks at once, on its own queue).
  open func start(_ changed: @escaping Changed) {
    callbacks.append(changed)
    queue.async { self.changed(to: .ipV4Only) }
  }

  /// l.86-90.
  open func stop() {
    callbacks.removeAll()
  }

  /// The driver's path change, as Reachability's notification (l.98-133).
  open func pathChanged(satisfied: Bool) {
    queue.async { self.changed(to: satisfied ? .ipV4Only : .unavailable) }
  }

  private func changed(to status: Status) {
    self.status = status
    for callback in callbacks { callback(status) }
  }
}

/// IPtProxy's obfs4 client in process (IPtProxyStartObfs4Proxy / IPtProxyStartLyrebird, a
/// local SOCKS port) as Debian's obfs4proxy in managed mode: its CMETHOD line gives the port.
final class PluggableTransportProcess: @unchecked Sendable {
  static let shared = PluggableTransportProcess()
  private let lock = NSLock()
  private var process: Process?
  private var listening = 0
  static let binary = "/usr/bin/obfs4proxy"

  /// IPtProxyObfs4Port(): the port the running client listens on (0 before it runs).
  var port: Int { lock.withLock { listening } }

  func start() {
    guard lock.withLock({ self.process == nil }),
      FileManager.default.isExecutableFile(atPath: Self.binary)
    else { return }
    let state = Settings.stateLocation.appendingPathComponent("pt_state").path
    try? FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
    let child = Process()
    child.executableURL = URL(fileURLWithPath: Self.binary)
    child.environment = [
      "TOR_PT_MANAGED_TRANSPORT_VER": "1", "TOR_PT_CLIENT_TRANSPORTS": "obfs4",
      "TOR_PT_STATE_LOCATION": state, "TOR_PT_EXIT_ON_STDIN_CLOSE": "0",
    ]
    let output = Pipe()
    child.standardOutput = output
    child.standardInput = Pipe()
    do { try child.run() } catch { return }
    lock.withLock { self.process = child }
    // Read until "CMETHOD obfs4 socks5 127.0.0.1:PORT" or "CMETHODS DONE" (5 s at most).
    let deadline = Date().addingTimeInterval(5)
    var text = ""
    let handle = output.fileHandleForReading
    while Date() < deadline, !text.contains("CMETHODS DONE") {
      let chunk = handle.availableData
      if chunk.isEmpty { break }
      text += String(decoding: chunk, as: UTF8.self)
    }
    for line in text.split(separator: "\n") where line.hasPrefix("CMETHOD obfs4 socks5 ") {
      if let port = line.split(separator: ":").last.flatMap({ Int($0) }) {
        lock.withLock { listening = port }
      }
    }
  }

  func stop() {
    let running = lock.withLock { () -> Process? in
      defer {
        process = nil
        listening = 0
      }
      return process
    }
    if let running, running.isRunning { running.terminate() }
  }
}
