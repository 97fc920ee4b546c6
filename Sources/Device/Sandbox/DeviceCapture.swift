import Audit
import Capture
import FailClosedSupport
import Foundation

extension SandboxRun {
  /// Opens the captures on the device's link with a deny-by-default policy allowing `allowed`:
  /// the device's capture (from a thread inside the device namespace) and the wire capture on
  /// the censor's end of the same link (``DeviceLinkCapture``), and proves both live with the
  /// run's positive-control packet before returning. Blocking. `bufferSize` is each kernel
  /// ring's size in bytes (benchmarks and tests shrink it to provoke drops); `observer` runs
  /// per packet on the device capture's thread. The wire capture's pcap, when `pcapPath` is
  /// given, is written beside it (``DeviceLinkCapture/wirePcapPath(beside:)``).
  public func openDeviceCapture(
    allowed: AllowedEndpoints, pcapPath: String?, bufferSize: Int32 = 32 << 20,
    observer: (@Sendable (PacketObservation) -> Void)? = nil
  ) throws -> DeviceLinkCapture {
    let probe = SyncProbe(
      destination: Endpoint(
        address: IPAddress(AddressPlan.controlTarget.host)!, port: AddressPlan.controlTarget.port),
      payload: SyncProbe.payload(runPrefix: names.prefix))
    let policy = AuditPolicy(
      allowed: allowed, syncProbe: probe,
      deviceAddresses: [IPAddress(AddressPlan.deviceV4)!, IPAddress(AddressPlan.deviceV6)!],
      linkNetworks: AddressPlan.deviceLinkNetworks)
    var farEnd = policy
    farEnd.farEndOfLink = true
    abortDeviceConnections()
    let device = self.device
    let censor = self.censor
    let deviceCapture = LiveCapture(
      LiveCapture.Configuration(
        interface: AddressPlan.deviceInterface, policy: policy, pcapPath: pcapPath,
        bufferSize: bufferSize, prepareThread: { try device.enterOnCurrentThread() },
        observer: observer, cooked: true))
    let wireCapture = LiveCapture(
      LiveCapture.Configuration(
        interface: AddressPlan.censorDeviceInterface, policy: farEnd,
        pcapPath: pcapPath.map(DeviceLinkCapture.wirePcapPath(beside:)), bufferSize: bufferSize,
        prepareThread: { try censor.enterOnCurrentThread() }, cooked: true))
    // Both rings are made at once (each is zeroed page by page: tens of ms).
    try deviceCapture.launch()
    do {
      try wireCapture.launch()
    } catch {
      _ = deviceCapture.stop()
      throw error
    }
    let pair = DeviceLinkCapture(device: deviceCapture, wire: wireCapture)
    do {
      try deviceCapture.awaitStart()
      try wireCapture.awaitStart()
    } catch {
      _ = pair.stop()
      throw error
    }
    do {
      try SandboxExec.sendPositiveControl(
        self, probe: probe, captures: [deviceCapture, wireCapture])
    } catch {
      _ = pair.stop()
      throw error
    }
    return pair
  }
}

extension SandboxRun {
  /// Aborts every TCP connection the device holds (`ss -K`, in the device namespace), before
  /// its capture opens. The audit follows a Tor flow's bytes from its SYN, so a connection the
  /// capture did not see open is unverifiable: the orphans a slot's previous scenario leaves
  /// retransmitting into the censor, or a lane's probe, would make a clean run inconclusive
  /// (the real lane showed it), and they are not this run's. Listening sockets stay.
  func abortDeviceConnections() {
    _ = try? CommandRunner.capture([
      "ip", "netns", "exec", names.device, "ss", "-K", "-t", "state", "connected",
    ])
  }
}

extension AddressPlan {
  /// The device's link: the only addresses its ARP and neighbour discovery may name.
  public static var deviceLinkNetworks: [IPNetwork] {
    [
      IPNetwork("\(deviceV4)/\(prefixV4)")!, IPNetwork("\(deviceV6)/\(prefixV6)")!,
    ]
  }

  /// The guards as the audit's allowed endpoints: guards of the mock network, whose device
  /// side opens every connection with the mock Tor's tunnel request (``GuardTunnel``).
  public static var guardEndpoints: AllowedEndpoints {
    AllowedEndpoints(guards.map(Endpoint.init), as: .mockGuard)
  }
}
