import Audit
import CPcap
import FailClosedSupport
import Foundation

/// What a live capture saw in one packet, handed to the optional observer on the capture
/// thread (keep the observer quick: it runs once per packet).
public struct PacketObservation: Sendable {
  public var timestamp: Int64
  public var wireLength: Int
  public var disposition: PacketDisposition
  public var packet: DecodedPacket
}

/// A libpcap capture on one interface, audited as it runs and written to a pcap file.
///
/// Opened in immediate mode with a small snaplen (ring slots are sized by it: a large snaplen
/// in immediate mode drops bursts) and a large buffer; read with non-blocking pcap_dispatch
/// after poll on the selectable descriptor, on a dedicated thread. `prepareThread` runs on
/// that thread before pcap_create (the sandbox enters the device's network namespace there:
/// a handle must be opened in the namespace that owns the interface).
///
/// Use: `let capture = try LiveCapture(config).start()`; send the positive control; wait until
/// `controlPacketsSeen > 0`; run the system under test; wait its grace period; then
/// `stop()` returns the ``AuditReport`` with pcap_stats (drops make it inconclusive).
/// `start()` and `stop()` block briefly: call them from a dedicated thread
/// (`BlockingIO.run`), not from the cooperative pool.
public final class LiveCapture: @unchecked Sendable {
  public struct Configuration: Sendable {
    public var interface: String
    public var policy: AuditPolicy
    /// Where to write the capture (pcap_dump); nil writes nothing.
    public var pcapPath: String?
    public var snapLength: Int32
    public var bufferSize: Int32
    /// Runs on the capture thread before pcap_create; throwing aborts `start()`.
    public var prepareThread: (@Sendable () throws -> Void)?
    public var observer: (@Sendable (PacketObservation) -> Void)?
    /// Capture through Linux's cooked interface ("any", kept to this interface's index by a
    /// kernel filter) so every packet carries the kernel's direction (outgoing or received)
    /// and the audit never has to take a packet's addresses for it. The file is then
    /// LINUX_SLL2, which Wireshark reads. Off: the interface's own link type.
    public var cooked: Bool

    public init(
      interface: String, policy: AuditPolicy, pcapPath: String? = nil, snapLength: Int32 = 2048,
      bufferSize: Int32 = 32 << 20, prepareThread: (@Sendable () throws -> Void)? = nil,
      observer: (@Sendable (PacketObservation) -> Void)? = nil, cooked: Bool = false
    ) {
      self.cooked = cooked
      self.interface = interface
      self.policy = policy
      self.pcapPath = pcapPath
      self.snapLength = snapLength
      self.bufferSize = bufferSize
      self.prepareThread = prepareThread
      self.observer = observer
    }
  }

  public let configuration: Configuration
  private let lock = NSLock()
  private let started = DispatchSemaphore(value: 0)
  private let finished = DispatchSemaphore(value: 0)
  private var startError: Error?
  private var counts = (packets: 0, control: 0, leaks: 0)
  private var state = State.idle
  private var extraReasons: [InconclusiveReason] = []
  private var finalReport: AuditReport?
  /// Written by `stop()` to wake the capture thread's poll at once.
  private var wakePipe: [Int32] = [-1, -1]

  private enum State { case idle, running, stopping, stopped }

  public init(_ configuration: Configuration) {
    self.configuration = configuration
  }

  /// Packets seen so far; positive-control packets among them; leak packets among them.
  public var packetsSeen: Int { lock.withLock { counts.packets } }
  public var controlPacketsSeen: Int { lock.withLock { counts.control } }
  public var leakPacketsSeen: Int { lock.withLock { counts.leaks } }

  /// Opens and activates the handle on the capture thread; returns once packets are being
  /// captured, or throws the reason it could not (naming the interface).
  @discardableResult
  public func start() throws -> LiveCapture {
    try launch()
    try awaitStart()
    return self
  }

  /// Starts the capture thread without waiting for it to open the handle: several captures
  /// launched together open at once (each kernel ring, tens of MB zeroed page by page, takes
  /// tens of ms). ``awaitStart()`` then waits.
  public func launch() throws {
    try lock.withLock {
      guard state == .idle else {
        throw CaptureError("capture on \(configuration.interface): already started")
      }
      state = .running
    }
    guard pipe(&wakePipe) == 0 else { throw SystemError("pipe") }
    let thread = Thread { [self] in run() }
    thread.name = "failclosed.capture.\(configuration.interface)"
    thread.start()
  }

  /// Waits until the launched capture has opened its handle, or throws why it could not.
  public func awaitStart() throws {
    started.wait()
    started.signal()
    if let startError {
      lock.withLock { state = .stopped }
      closeWakePipe()
      throw startError
    }
  }

  /// Records a reason the run cannot vouch for a pass (e.g. the capture started after the
  /// system under test), added to the report at `stop()`.
  public func noteInconclusive(_ reason: InconclusiveReason) {
    lock.withLock { extraReasons.append(reason) }
  }

  /// Stops the capture after draining what the kernel still holds, reads pcap_stats, closes
  /// the pcap file and returns the report. Call after the caller's grace period.
  public func stop() -> AuditReport {
    requestStop()
    return awaitStop()
  }

  /// Asks the capture thread to drain and stop, without waiting: captures stopped together
  /// release their rings at once. ``awaitStop()`` then waits for the report.
  public func requestStop() {
    let wait: Bool = lock.withLock {
      if state == .running {
        state = .stopping
        return true
      }
      return state == .stopping
    }
    if wait {
      // Under the lock: the capture thread may be closing the pipe as it ends on its own, and
      // a closed descriptor's number can already belong to someone else's file.
      lock.withLock {
        var byte: UInt8 = 1
        if wakePipe[1] >= 0 { _ = write(wakePipe[1], &byte, 1) }
      }
    }
  }

  /// Waits for the report of a capture asked to stop (``requestStop()``).
  public func awaitStop() -> AuditReport {
    let wait = lock.withLock { state == .stopping }
    if wait {
      finished.wait()
      finished.signal()
    }
    return lock.withLock {
      finalReport
        ?? .inconclusive(InconclusiveReason(.captureError, "the capture never started"))
    }
  }

  private var isStopping: Bool { lock.withLock { state != .running } }

  private func closeWakePipe() {
    lock.withLock {
      for fd in wakePipe where fd >= 0 { Glibc.close(fd) }
      wakePipe = [-1, -1]
    }
  }

  /// The capture thread: open, loop, drain, report.
  private func run() {
    let interface = configuration.interface
    let handle: OpaquePointer
    let loop: CaptureLoop
    do {
      try configuration.prepareThread?()
      handle = try Self.open(configuration)
      let writer = try configuration.pcapPath.map { try PcapWriter(path: $0, handle: handle) }
      let raw = pcap_datalink(handle)
      guard let linkType = LinkType(rawValue: raw) else {
        pcap_close(handle)
        throw CaptureError("capture on \(interface): unsupported link type \(raw)")
      }
      loop = CaptureLoop(
        auditor: Auditor(linkType: linkType, policy: configuration.policy), writer: writer,
        observer: configuration.observer, capture: self,
        nanoseconds: pcap_get_tstamp_precision(handle) == PCAP_TSTAMP_PRECISION_NANO)
    } catch {
      startError = error
      started.signal()
      return
    }
    started.signal()

    let fd = pcap_get_selectable_fd(handle)
    let context = Unmanaged.passUnretained(loop).toOpaque()
    var loopError: String?
    while !isStopping {
      var fds = [
        pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakePipe[0], events: Int16(POLLIN), revents: 0),
      ]
      // The timeout only bounds how long a lost wake-up could delay stop().
      let ready = poll(&fds, 2, 200)
      if ready < 0 && errno != EINTR {
        loopError = SystemError("poll(capture on \(interface))").description
        break
      }
      loop.turn()
      if pcap_dispatch(handle, -1, captureCallback, context.assumingMemoryBound(to: UInt8.self))
        < 0
      {
        loopError = "capture on \(interface): \(CString.text(pcap_geterr(handle)))"
        break
      }
    }
    // Drain what is already in the ring (non-blocking: returns 0 when empty).
    for _ in 0..<10_000 {
      loop.turn()
      let read = pcap_dispatch(
        handle, -1, captureCallback, context.assumingMemoryBound(to: UInt8.self))
      if read <= 0 { break }
    }
    var stats = pcap_stat()
    let capture: CaptureStatistics?
    if pcap_stats(handle, &stats) == 0 {
      capture = CaptureStatistics(
        received: UInt64(stats.ps_recv), dropped: UInt64(stats.ps_drop),
        interfaceDropped: UInt64(stats.ps_ifdrop))
    } else {
      capture = nil
      loop.auditor.noteInconclusive(
        InconclusiveReason(
          .captureError, "pcap_stats failed on \(interface): \(CString.text(pcap_geterr(handle)))"))
    }
    if let loopError {
      loop.auditor.noteInconclusive(InconclusiveReason(.captureError, loopError))
    }
    loop.writer?.close()
    if let failure = loop.writer?.failure {
      // The audit saw every packet; the file a reader would open to check it did not keep them.
      loop.auditor.noteInconclusive(
        InconclusiveReason(.captureError, "the capture file could not be written: \(failure)"))
    }
    pcap_close(handle)
    for reason in lock.withLock({ extraReasons }) { loop.auditor.noteInconclusive(reason) }
    let report = loop.auditor.report(capture: capture)
    lock.withLock {
      finalReport = report
      state = .stopped
    }
    closeWakePipe()
    finished.signal()
  }

  fileprivate func count(_ disposition: PacketDisposition) {
    lock.withLock {
      counts.packets += 1
      switch disposition {
      case .control: counts.control += 1
      case .leak: counts.leaks += 1
      default: break
      }
    }
  }

  private static func open(_ configuration: Configuration) throws -> OpaquePointer {
    let interface = configuration.interface
    var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
    var interfaceIndex: UInt32 = 0
    if configuration.cooked {
      interfaceIndex = if_nametoindex(interface)
      guard interfaceIndex != 0 else {
        throw CaptureError("capture on \(interface): no such interface (if_nametoindex)")
      }
    }
    guard let handle = pcap_create(configuration.cooked ? "any" : interface, &errorBuffer) else {
      throw CaptureError("capture on \(interface): pcap_create: \(CString.text(errorBuffer))")
    }
    func check(_ result: Int32, _ call: String) throws {
      guard result == 0 else {
        let reason = CString.text(pcap_geterr(handle))
        pcap_close(handle)
        throw CaptureError("capture on \(interface): \(call) failed (\(result)): \(reason)")
      }
    }
    try check(pcap_set_snaplen(handle, configuration.snapLength), "pcap_set_snaplen")
    try check(pcap_set_promisc(handle, 0), "pcap_set_promisc")
    try check(pcap_set_immediate_mode(handle, 1), "pcap_set_immediate_mode")
    try check(pcap_set_buffer_size(handle, configuration.bufferSize), "pcap_set_buffer_size")
    // Nanosecond stamps when the platform has them; microseconds otherwise.
    _ = pcap_set_tstamp_precision(handle, Int32(PCAP_TSTAMP_PRECISION_NANO))
    let activated = pcap_activate(handle)
    if activated < 0 {
      let reason = CString.text(pcap_geterr(handle))
      let status = CString.text(pcap_statustostr(activated))
      pcap_close(handle)
      throw CaptureError(
        "capture on \(interface): pcap_activate: \(status) \(reason)"
          + (activated == PCAP_ERROR_PERM_DENIED ? " (needs root or CAP_NET_RAW)" : ""))
    }
    if configuration.cooked {
      try check(pcap_set_datalink(handle, LinkType.linuxSLL2.rawValue), "pcap_set_datalink(SLL2)")
      // Only this interface: the device's loopback (the app's SOCKS traffic) stays out of
      // the ring.
      var program = bpf_program()
      try check(
        pcap_compile(handle, &program, "ifindex \(interfaceIndex)", 1, PCAP_NETMASK_UNKNOWN),
        "pcap_compile(ifindex \(interfaceIndex))")
      let filtered = pcap_setfilter(handle, &program)
      pcap_freecode(&program)
      try check(filtered, "pcap_setfilter(ifindex \(interfaceIndex))")
    }
    try check(pcap_setnonblock(handle, 1, &errorBuffer), "pcap_setnonblock")
    guard pcap_get_selectable_fd(handle) >= 0 else {
      pcap_close(handle)
      throw CaptureError("capture on \(interface): no selectable descriptor")
    }
    return handle
  }
}

/// State the C callback reaches through its user pointer; touched only on the capture thread.
private final class CaptureLoop {
  let auditor: Auditor
  let writer: PcapWriter?
  let observer: (@Sendable (PacketObservation) -> Void)?
  unowned let capture: LiveCapture
  let nanoseconds: Bool
  /// The packets' stamps on the harness's steady timeline, whatever is done to the wall clock.
  var wallClock = WallClockSteps(
    base: WallClockOffset.process, offset: WallClockOffset.now(),
    monotonic: Int64(MonotonicInstant.now.nanoseconds))

  init(
    auditor: Auditor, writer: PcapWriter?, observer: (@Sendable (PacketObservation) -> Void)?,
    capture: LiveCapture, nanoseconds: Bool
  ) {
    self.auditor = auditor
    self.writer = writer
    self.observer = observer
    self.capture = capture
    self.nanoseconds = nanoseconds
  }

  /// Before each read of the ring: where the wall clock stands now.
  func turn() {
    wallClock.turn(
      offset: WallClockOffset.now(), monotonic: Int64(MonotonicInstant.now.nanoseconds))
  }

  func handle(_ header: UnsafePointer<pcap_pkthdr>, _ bytes: UnsafePointer<UInt8>) {
    let frame = UnsafeRawBufferPointer(start: bytes, count: Int(header.pointee.caplen))
    writer?.write(header: header, frame: frame)
    let fraction = Int64(header.pointee.ts.tv_usec)
    // The file keeps the kernel's stamp; the audit and the run's timeline the steady one.
    let stamp = wallClock.steady(
      Int64(header.pointee.ts.tv_sec) * 1_000_000_000 + (nanoseconds ? fraction : fraction * 1000))
    let wireLength = Int(header.pointee.len)
    var packet = auditor.decode(frame)
    let disposition = auditor.consume(
      timestamp: stamp, wireLength: wireLength, frame: frame, packet: &packet)
    capture.count(disposition)
    observer?(
      PacketObservation(
        timestamp: stamp, wireLength: wireLength, disposition: disposition, packet: packet))
  }
}

private func captureCallback(
  _ user: UnsafeMutablePointer<UInt8>?, _ header: UnsafePointer<pcap_pkthdr>?,
  _ bytes: UnsafePointer<UInt8>?
) {
  guard let user, let header, let bytes else { return }
  Unmanaged<CaptureLoop>.fromOpaque(UnsafeRawPointer(user)).takeUnretainedValue().handle(
    header, bytes)
}
