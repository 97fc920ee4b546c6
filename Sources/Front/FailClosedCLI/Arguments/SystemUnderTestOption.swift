import BitchatSource
import Lanes

/// `--sut NAME` (and `--bitchat-src DIR`) as every command reads them: the system looked up in
/// Lanes' registry (``TestedSystems``), never compared as a string here.
enum SystemUnderTestOption {
  /// The option's usage text: "model|bitchat-source".
  static var choices: String { TestedSystems.names().joined(separator: "|") }

  /// `--sut`, as each command's table lists it.
  static let spec = OptionSpec(
    "sut", .single, valueName: choices,
    help: "the system under test (default \(TestedSystems.defaultName))",
    values: .words(TestedSystems.names()))

  /// The system `--sut` names, consistent with --bitchat-src: a checkout given means bitchat's
  /// own code (as `app --bitchat-src` runs it), so it implies bitchat-source, and contradicts
  /// any other explicit --sut.
  static func system(
    _ arguments: ParsedArguments, in systems: [TestedSystem] = TestedSystems.all
  ) throws -> TestedSystem {
    let source = arguments.value("bitchat-src")
    let name =
      arguments.value("sut")
      ?? (source == nil ? TestedSystems.defaultName : BitchatSourceSystem.entry.name)
    guard let system = TestedSystems.named(name, in: systems) else {
      throw UsageError(
        "--sut: expected " + TestedSystems.names(in: systems).joined(separator: " or ")
          + ", got '\(name)'")
    }
    if let source, system.name != BitchatSourceSystem.entry.name {
      throw UsageError(
        "--bitchat-src \(source) runs bitchat's own code; it contradicts --sut \(system.name)")
    }
    return system
  }

  /// The inputs a system gets ready with.
  static func inputs(_ arguments: ParsedArguments) -> TestedSystemInputs {
    TestedSystemInputs(
      bitchatSource: arguments.value("bitchat-src"), progress: { FailClosedMain.printError($0) })
  }
}
