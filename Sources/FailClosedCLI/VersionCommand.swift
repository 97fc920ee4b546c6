/// `failclosed version`: the harness version, for reports and bug reports.
public struct VersionCommand: Command {
  public static let version = "0.1.0"

  public init() {}
  public let name = "version"
  public let summary = "print the failclosed version"
  public let usage = "Usage: failclosed version\n\nPrints the version of failclosed."
  public let options: [OptionSpec] = []

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    print("failclosed \(VersionCommand.version)")
    return ExitCode.pass
  }
}
