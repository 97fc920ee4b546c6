import Audit
import Capture
import FailClosedSupport
import Foundation

extension SandboxRun {
  /// Opens the capture on the device's link (from a thread inside the device namespace) with a
  /// deny-by-default policy allowing `allowed`, and proves it is live with the run's
  /// positive-control packet before returning. Blocking. `bufferSize` is the kernel ring's size
  /// in bytes (benchmarks and tests shrink it to provoke drops); `observer` runs per packet on
  /// the capture thread.
  public func openDeviceCapture(
    allowed: Set<Endpoint>, pcapPath: String?, bufferSize: Int32 = 32 << 20,
    observer: (@Sendable (PacketObservation) -> Void)? = nil
  ) throws -> LiveCapture {
    let probe = SyncProbe(
      destination: Endpoint(
        address: IPAddress(AddressPlan.controlTarget.host)!, port: AddressPlan.controlTarget.port),
      payload: SyncProbe.payload(runPrefix: names.prefix))
    let policy = AuditPolicy(
      allowed: allowed, syncProbe: probe,
      deviceAddresses: [IPAddress(AddressPlan.deviceV4)!, IPAddress(AddressPlan.deviceV6)!],
      linkNetworks: AddressPlan.deviceLinkNetworks)
    let device = self.device
    let capture = LiveCapture(
      LiveCapture.Configuration(
        interface: AddressPlan.deviceInterface, policy: policy, pcapPath: pcapPath,
        bufferSize: bufferSize, prepareThread: { try device.enterOnCurrentThread() },
        observer: observer, cooked: true))
    try capture.start()
    do {
      try SandboxExec.sendPositiveControl(self, probe: probe, capture: capture)
    } catch {
      _ = capture.stop()
      throw error
    }
    return capture
  }
}

extension AddressPlan {
  /// The device's link: the only addresses its ARP and neighbour discovery may name.
  public static var deviceLinkNetworks: [IPNetwork] {
    [
      IPNetwork("\(deviceV4)/\(prefixV4)")!, IPNetwork("\(deviceV6)/\(prefixV6)")!,
    ]
  }

  /// The guards as the audit's allowed endpoints.
  public static var guardEndpoints: Set<Endpoint> {
    Set(guards.map(Endpoint.init))
  }
}
