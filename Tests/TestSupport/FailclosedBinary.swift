import Foundation

/// The `failclosed` executable `swift build --build-tests` puts beside the test bundle: tests
/// that start it as a process (`mock-tor`, `app`, `exec`, `testnet up`) find it here.
public enum FailclosedBinary {
  /// Where it is once built: the running test bundle's directory (read from /proc/self/exe, so
  /// a relative argv[0] or a changed working directory cannot mislead it).
  public static let path: String = {
    let bundle =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: bundle).deletingLastPathComponent()
      .appendingPathComponent("failclosed").path
  }()

  /// The path when it is built (an executable file there), nil when it is not.
  public static var built: String? {
    FileManager.default.isExecutableFile(atPath: path) ? path : nil
  }

  /// What a test that runs it says when it is missing (its skip comment and its `#require`).
  public static let missing = "needs the failclosed binary (swift build)"
}
