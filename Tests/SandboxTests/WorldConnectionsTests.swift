import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// A pair that outlives its scenario hands the next one nothing: the world's side of the
/// device's connections ends with the scenario (``SandboxRun/closeWorldConnections()``).
@Suite struct WorldConnectionsTests {
  /// The world's established connections with the device (its side, by `ss`).
  static func worldConnections(_ run: SandboxRun) throws -> [String] {
    let output = try Spawner.capture([
      "ip", "netns", "exec", run.names.world, "ss", "-t", "-n", "-H", "state", "established",
      "dst", AddressPlan.deviceV4,
    ])
    return output.stdout.split(separator: "\n").map(String.init)
  }

  /// A device holding a connection to the world's echo service: before, the world holds its
  /// side (the canary: it would stay after the scenario); after the close, the world holds
  /// none and the device's side is reset.
  @Test(.needsRoot)
  func theWorldsSideOfTheDevicesConnectionsEnds() async throws {
    try await withSandbox { run in
      try await BlockingIO.run {
        _ = try run.startWorld()
        let output = NSTemporaryDirectory() + "fc-world-conn-\(run.names.prefix).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let actions = FileActions()
        actions.open("/dev/null", to: 0, flags: O_RDONLY)
        actions.open(output, to: 1, flags: O_WRONLY | O_CREAT | O_TRUNC)
        let client = try Spawner.spawn(
          [
            "ip", "netns", "exec", run.names.device, "python3", "-c",
            """
            import socket, sys
            s = socket.create_connection(("10.66.1.80", 8080), timeout=20)
            try:
                data = s.recv(1)
                print("closed" if data == b"" else "data")
            except ConnectionResetError:
                print("reset")
            except OSError as error:
                print("error", error)
            sys.stdout.flush()
            """,
          ], actions: actions)
        var ended: Int32?
        defer {
          if ended == nil {
            kill(client, SIGKILL)
            _ = Spawner.wait(client)
          }
        }
        #expect(try waitUntil { try !Self.worldConnections(run).isEmpty })
        let closed = try run.closeWorldConnections()
        #expect(closed >= 1)
        #expect(try Self.worldConnections(run).isEmpty)
        ended = Spawner.wait(client)
        let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(said.hasPrefix("reset") || said.hasPrefix("closed"), "client said \(said)")
        // Nothing left to close: a second call closes none.
        #expect(try run.closeWorldConnections() == 0)
      }
    }
  }
}
