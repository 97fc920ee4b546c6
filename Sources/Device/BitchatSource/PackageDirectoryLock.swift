import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// One process at a time generates or builds a cache directory (flock on `<directory>.lock`):
/// leak-audit's runs, the tests' children and a sweep may ask for the same key at once, and
/// two writers of its links or two SwiftPM builds in one directory would fight.
enum PackageDirectoryLock {
  static func withLock<T>(_ directory: String, _ body: () throws -> T) throws -> T {
    try FileManager.default.createDirectory(
      atPath: (directory as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    let fd = open(directory + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return try body() }
    defer { close(fd) }
    while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
    defer { flock(fd, LOCK_UN) }
    return try body()
  }
}
