import FailClosedSupport
import Foundation

/// Linux calls that Glibc's Swift overlay hides behind _GNU_SOURCE, looked up once by name.
enum LinuxCalls {
  static let cloneNewNet: Int32 = 0x4000_0000

  private typealias SetnsFunction = @convention(c) (Int32, Int32) -> Int32
  private typealias Pipe2Function = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

  nonisolated(unsafe) private static let setnsPointer = dlsym(
    UnsafeMutableRawPointer(bitPattern: 0), "setns")
  nonisolated(unsafe) private static let pipe2Pointer = dlsym(
    UnsafeMutableRawPointer(bitPattern: 0), "pipe2")

  static func setns(_ fd: Int32, _ type: Int32) -> Int32 {
    guard let pointer = setnsPointer else {
      errno = ENOSYS
      return -1
    }
    return unsafeBitCast(pointer, to: SetnsFunction.self)(fd, type)
  }

  /// A close-on-exec pipe, created atomically so a child spawned concurrently by another
  /// thread cannot inherit it (and hold its write end open).
  static func pipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    guard let pointer = pipe2Pointer else { throw SystemError("pipe2", code: ENOSYS) }
    let result = fds.withUnsafeMutableBufferPointer {
      unsafeBitCast(pointer, to: Pipe2Function.self)($0.baseAddress!, O_CLOEXEC)
    }
    guard result == 0 else { throw SystemError("pipe2") }
    return (fds[0], fds[1])
  }
}
