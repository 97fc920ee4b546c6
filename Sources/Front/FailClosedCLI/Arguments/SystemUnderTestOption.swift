import BitchatSource
import Lanes
import Scenarios

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
      ?? (source == nil
        ? (arguments.value("onion-browser-src") == nil
          ? TestedSystems.defaultName : OnionBrowserSourceSystem.entry.name)
        : BitchatSourceSystem.entry.name)
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

  /// leak-audit's `--sut A,B`: each named system, in order, once; --bitchat-src as for one.
  static func systems(
    _ arguments: ParsedArguments, in systems: [TestedSystem] = TestedSystems.all
  ) throws -> [TestedSystem] {
    guard let list = arguments.value("sut"), list.contains(",") else {
      return [try system(arguments, in: systems)]
    }
    var chosen: [TestedSystem] = []
    for name in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
      guard let system = TestedSystems.named(name, in: systems) else {
        throw UsageError(
          "--sut: expected names among " + TestedSystems.names(in: systems).joined(separator: ", ")
            + " separated by commas, got '\(name)'")
      }
      guard !chosen.contains(where: { $0.name == name }) else {
        throw UsageError("--sut: '\(name)' is named twice")
      }
      chosen.append(system)
    }
    return chosen
  }

  /// The inputs a system gets ready with.
  static func inputs(_ arguments: ParsedArguments, program: ProgramSpec? = nil)
    -> TestedSystemInputs
  {
    TestedSystemInputs(
      bitchatSource: arguments.value("bitchat-src"), program: program,
      onionBrowserSource: arguments.value("onion-browser-src"),
      progress: { FailClosedMain.printError($0) })
  }
}
