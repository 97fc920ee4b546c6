import FailClosedSupport
import Foundation

/// Linux calls that Glibc's Swift overlay hides behind _GNU_SOURCE, looked up once by name.
enum LinuxCalls {
  static let cloneNewNet: Int32 = 0x4000_0000

  private typealias SetnsFunction = @convention(c) (Int32, Int32) -> Int32

  nonisolated(unsafe) private static let setnsPointer = dlsym(
    UnsafeMutableRawPointer(bitPattern: 0), "setns")

  static func setns(_ fd: Int32, _ type: Int32) -> Int32 {
    guard let pointer = setnsPointer else {
      errno = ENOSYS
      return -1
    }
    return unsafeBitCast(pointer, to: SetnsFunction.self)(fd, type)
  }
}
