import Audit
import Capture
import FailClosedSupport
import Foundation

/// What `failclosed exec` does, as a library call: build a sandbox, open the capture on the
/// device's link before anything runs, prove the capture sees a positive-control packet, start
/// the Tor stand-in, run the command in the device, wait for its whole process tree and a
/// grace period, stop the capture, audit, write the report, tear everything down.
public enum SandboxExec {
  public struct Options: Sendable {
    public var command: [String]
    /// Destinations allowed besides the guards, each with its role.
    public var allow: AllowedEndpoints
    /// Start the Tor stand-in on 127.0.0.1:39050 in the device.
    public var tor: Bool
    /// Seconds to keep capturing after the process tree has ended.
    public var grace: Double
    /// Seconds the command's tree may run before it is killed (what it sent is still judged).
    public var timeout: Double
    /// Where report.json and capture.pcap go; nil keeps nothing.
    public var reportDirectory: String?
    public var censorRules: [CensorRule]
    /// Where the command's stdout and stderr go; nil shares the harness's.
    public var commandOutput: String?
    /// How the world's own servers answer (reset, stall, garbage): the verdict must not
    /// depend on it.
    public var worldFault: WorldFault = .none

    public init(
      command: [String], allow: AllowedEndpoints = [], tor: Bool = true, grace: Double = 3,
      timeout: Double = 120, reportDirectory: String? = nil, censorRules: [CensorRule] = [],
      commandOutput: String? = nil
    ) {
      self.command = command
      self.allow = allow
      self.tor = tor
      self.grace = grace
      self.timeout = timeout
      self.reportDirectory = reportDirectory
      self.censorRules = censorRules
      self.commandOutput = commandOutput
    }
  }

  /// The outcome: the audit, and what the run itself saw.
  public struct Result: Sendable, Codable {
    public var report: AuditReport
    public var command: [String]
    /// The command's exit status (128 + signal when killed); nil if it outlived the timeout.
    public var commandStatus: Int32?
    /// True when processes were still in the device at the timeout and were killed.
    public var killedAtTimeout: Bool
    public var prefix: String
    public var setupMilliseconds: Double
    public var teardownMilliseconds: Double
    /// Questions the world's resolver answered (name, type, source).
    public var dnsQuestions: [RecordedQuestion]
    public var pcapPath: String?
    /// Why report.json could not be written (a full disk); the verdict stands.
    public var reportError: String?
  }

  /// How a Tor stand-in is started in the device: given the run, start it (its SOCKS port on
  /// 127.0.0.1:39050 inside the device) and return how to stop it. The default is the mock Tor
  /// (``mockTorStarter(resolvable:)``); the system-under-test lane may pass its own.
  public typealias TorStarter = @Sendable (SandboxRun) throws -> @Sendable () -> Void

  /// Sets up what the Tor stand-in needs in the world before the capture opens (a private
  /// Tor network for `--tor real`), blocking; returns further destinations to allow.
  public typealias WorldPreparation = @Sendable (SandboxRun) throws -> AllowedEndpoints

  /// Runs the command. `torStarter` replaces the mock Tor (the hook for the system under
  /// test's own Tor transport, or a real tor client); `prepare` runs once the world is up.
  public static func run(
    _ options: Options, torStarter: TorStarter? = nil, prepare: WorldPreparation? = nil
  ) async throws -> Result {
    try await BlockingIO.run("failclosed.exec") {
      try runBlocking(options, torStarter: torStarter ?? mockTorStarter(), prepare: prepare)
    }
  }

  /// The longest grace or timeout accepted (a day): checked before anything is built, since a
  /// larger one overflows the nanosecond deadlines.
  public static let maximumSeconds: Double = 86_400

  /// An option out of range, found before the sandbox is built.
  public struct OptionError: Error, CustomStringConvertible, Sendable {
    public let description: String
  }

  /// Throws when a duration is out of range (negative, not finite, longer than a day).
  public static func validate(_ options: Options) throws {
    for (name, value) in [("grace", options.grace), ("timeout", options.timeout)]
    where !(value.isFinite && value >= 0 && value <= maximumSeconds) {
      throw OptionError(
        description: "\(name) \(value) s is out of range (0 to \(Int(maximumSeconds)) s)")
    }
  }

  static func runBlocking(
    _ options: Options, torStarter: TorStarter, prepare: WorldPreparation? = nil
  ) throws -> Result {
    try validate(options)
    let run = try SandboxRun.createBlocking()
    defer { run.teardown() }
    try run.startWorld(fault: options.worldFault)
    if !options.censorRules.isEmpty { try run.applyCensorRules(options.censorRules) }
    let prepared = try prepare?(run) ?? []

    var pcapPath: String?
    if let directory = options.reportDirectory {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      pcapPath = directory + "/capture.pcap"
    }
    let capture = try run.openDeviceCapture(
      allowed: AddressPlan.guardEndpoints.union(options.allow).union(prepared), pcapPath: pcapPath)
    var captureStopped = false
    defer { if !captureStopped { _ = capture.stop() } }

    if options.tor {
      let stop = try torStarter(run)
      run.recordService("tor") { stop() }
    }
    let command = try DeviceCommand(
      options.command, in: run, output: options.commandOutput)
    let (status, finished) = command.waitForTree(timeout: options.timeout)
    if !finished { command.killTree() }
    // A daemonised child that leaks late is still caught: keep capturing for the grace period,
    // and anything that appears in the device meanwhile is waited for too (bounded).
    let graceEnd = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, options.grace) * 1e9)
    while DispatchTime.now().uptimeNanoseconds < graceEnd { usleep(20_000) }
    _ = command.waitForTree(timeout: min(options.timeout, 5))
    command.killTree()
    let report = capture.stop()
    captureStopped = true
    let questions = run.worldServices.withLock { $0?.resolver.questions ?? [] }
    run.teardown()
    var result = Result(
      report: report, command: options.command, commandStatus: status,
      killedAtTimeout: !finished, prefix: run.names.prefix,
      setupMilliseconds: run.setupMilliseconds, teardownMilliseconds: run.teardownMilliseconds,
      dnsQuestions: questions, pcapPath: pcapPath)
    if let directory = options.reportDirectory {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      // Whole or not at all; a failure is the caller's to print after the verdict.
      do {
        try AtomicFile.write(encoder.encode(result), to: directory + "/report.json")
      } catch {
        result.reportError = "\(error)"
      }
    }
    return result
  }

  /// Sends the run's positive-control packet from the device until every capture has seen it
  /// (at most 2 s); a capture that never sees it makes the verdict inconclusive.
  static func sendPositiveControl(_ run: SandboxRun, probe: SyncProbe, captures: [LiveCapture])
    throws
  {
    let sender = try run.device.perform { try DatagramSocket(.ipv4) }
    defer { sender.close() }
    for _ in 0..<20 {
      try sender.send(probe.payload ?? SyncProbe.defaultPrefix, to: AddressPlan.controlTarget)
      for _ in 0..<10 {
        if captures.allSatisfy({ $0.controlPacketsSeen > 0 }) { return }
        usleep(10_000)
      }
    }
    for capture in captures where capture.controlPacketsSeen == 0 {
      capture.noteInconclusive(
        InconclusiveReason(
          .positiveControlMissing,
          "the positive-control packet to \(AddressPlan.controlTarget) was never captured"))
    }
  }
}
