import FailClosedSupport
import Foundation

/// A throwaway network namespace with `lo` up, deleted by `remove()` (call it in a defer).
final class TestNamespace: Sendable {
  let name: String

  init() throws {
    name = "fcaudit-\(getpid())-\(UInt32.random(in: 0...0xFFFF_FFFF))"
    try Self.run(["ip", "netns", "add", name])
    do {
      try Self.run(["ip", "-n", name, "link", "set", "lo", "up"])
    } catch {
      remove()
      throw error
    }
  }

  func remove() {
    _ = try? Self.run(["ip", "netns", "delete", name])
  }

  /// Enters the namespace on the calling thread (for `LiveCapture.prepareThread`).
  func enter() throws {
    let fd = open("/var/run/netns/\(name)", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw SystemError("open(/var/run/netns/\(name))") }
    defer { close(fd) }
    // setns is not exported by Swift's Glibc module; reach it through the dynamic linker.
    typealias SetNS = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setns") else {
      throw SystemError("dlsym(setns)", code: ENOSYS)
    }
    let cloneNewNet: Int32 = 0x4000_0000
    guard unsafeBitCast(symbol, to: SetNS.self)(fd, cloneNewNet) == 0 else {
      throw SystemError("setns(\(name))")
    }
  }

  /// Runs a shell command inside the namespace; returns its exit status.
  @discardableResult
  func shell(_ command: String) throws -> Int32 {
    try Self.run(["ip", "netns", "exec", name, "bash", "-c", command], check: false)
  }

  @discardableResult
  static func run(_ arguments: [String], check: Bool = true) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    if check && process.terminationStatus != 0 {
      throw SystemError(
        "\(arguments.joined(separator: " ")) exited \(process.terminationStatus)", code: 0)
    }
    return process.terminationStatus
  }

  /// Runs a command and returns its standard output.
  static func output(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }
}
