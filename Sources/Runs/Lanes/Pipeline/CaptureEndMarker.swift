import Audit
import Capture
import FailClosedSupport
import Foundation
import Sandbox

/// The end of a run's capture: the positive control's datagram once more, from the device,
/// after the app and the Tor side have ended. A packet a process sends is on the device's link
/// (and in the capture's ring) before its send returns; what the kernel still holds for it (a
/// neighbour lookup, a softirq backlog under load) goes out ahead of a later datagram on the
/// same link. So once the capture has read the marker, it has read every packet the device's
/// processes sent before they ended, whatever the load, without a fixed wait.
enum CaptureEndMarker {
  /// Sends the marker (again every 50 ms, at most 5 times: a probe is bounded) and waits at
  /// most `timeout` real seconds for the capture to read it. False: it never came, and the
  /// capture cannot vouch that it saw the end of the run. Both ends of the device's link
  /// must have read it (``DeviceLinkCapture/controlPacketsSeen`` is the lower count).
  static func confirm(_ capture: DeviceLinkCapture, sandbox: SandboxRun, timeout: Double) -> Bool {
    guard let probe = capture.device.configuration.policy.syncProbe else { return true }
    let seen = capture.controlPacketsSeen
    guard let sender = try? sandbox.device.perform({ try DatagramSocket(.ipv4) }) else {
      return false
    }
    defer { sender.close() }
    let clock = SystemClock()
    var sent = 0
    while clock.now < timeout {
      if sent < 5 && clock.now >= Double(sent) * 0.05 {
        try? sender.send(probe.payload ?? SyncProbe.defaultPrefix, to: AddressPlan.controlTarget)
        sent += 1
      }
      if capture.controlPacketsSeen > seen { return true }
      clock.sleepBlocking(seconds: 0.001)
    }
    return false
  }
}
