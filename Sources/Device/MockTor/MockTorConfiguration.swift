import FailClosedSupport
import Foundation
import TorControl

/// Everything a ``MockTor`` needs to know before it starts.
public struct MockTorConfiguration: Sendable {
  public var personality: MockTorPersonality
  /// Where SOCKS listens; port 0 picks a free port (read it back from ``MockTor/socksAddress``).
  public var socksAddress: SocketAddress
  /// A non-loopback listener exposes the mock beyond this machine: refused unless set.
  public var allowNonLoopback = false
  public var clock: any HarnessClock
  /// The clock's time at which plan time 0 falls: 0, the run's epoch, when the runner hands
  /// one over (`--epoch`), so the mock's times are the app's and the runner's; nil: when
  /// ``MockTor/start()`` is called.
  public var planOrigin: Double?
  /// How the simulated bootstrap goes (TorControl's plans: healthy, stall, never, flap, crash).
  public var bootstrapPlan: BootstrapPlan
  public var destinations: DestinationMap
  /// When set, streams go here instead of to the destination map.
  public var upstream: (any MockTorUpstream)?
  /// Faults by destination as the client names it (hostname, or IP text for raw IPs).
  public var faults: [String: StreamToxics]
  /// JSON-lines event log file; records are kept in memory either way.
  public var eventLogPath: String?
  /// The control port, served by TorControl's code (ctor only).
  public var controlPort: UInt16?
  /// Clock seconds a connection may sit without completing its SOCKS handshake.
  public var handshakeTimeout: Double = 30
  /// Clock seconds an established stream may stay silent in both directions.
  public var streamIdleTimeout: Double = 300
  /// ctor: clock seconds a stream waits for the bootstrap before tor's timeout reply.
  public var streamWaitLimit: Double = 120
  /// Real seconds allowed for connecting to a mapped destination.
  public var connectTimeout: Double = 10
  /// Connections held at once (handshaking and streaming); beyond it, the oldest
  /// handshaking connection is dropped (each SOCKS loop holds its share).
  public var maxConnections = 20_000
  /// Event-loop threads serving the SOCKS port (handshakes and streams without toxics): one
  /// per core, at least two. Eight loops on two cores slept and woke more than they served:
  /// 4.4 context switches per connection against 2.7 with two loops, and in interleaved
  /// rounds two loops served 1.3x microsocks's connections/s at 16 clients and 1.4x at 1,000
  /// where eight served 1.2-1.3x and 1.2x (docs/performance.md). The earlier reason for more
  /// loops, that each thread wins its own turns on a loaded machine, does not hold: every
  /// process is one scheduling group here (sched_autogroup).
  public var socksLoopThreads = max(2, ProcessInfo.processInfo.activeProcessorCount)

  public static let defaultSOCKSAddress = SocketAddress("127.0.0.1:39050")!

  public init(
    personality: MockTorPersonality = .ctor,
    socksAddress: SocketAddress = MockTorConfiguration.defaultSOCKSAddress,
    clock: any HarnessClock = SystemClock(),
    bootstrapPlan: BootstrapPlan = .healthy(after: 5),
    destinations: DestinationMap = DestinationMap(),
    upstream: (any MockTorUpstream)? = nil,
    faults: [String: StreamToxics] = [:],
    eventLogPath: String? = nil
  ) {
    self.personality = personality
    self.socksAddress = socksAddress
    self.clock = clock
    self.bootstrapPlan = bootstrapPlan
    self.destinations = destinations
    self.upstream = upstream
    self.faults = faults
    self.eventLogPath = eventLogPath
  }

  /// The fault for a destination as the client sent it (names are case-insensitive).
  public func fault(for destination: String) -> StreamToxics? {
    faults[destination] ?? faults.first { $0.key.lowercased() == destination.lowercased() }?.value
  }
}
