/// An option a system under test declares for `leak-audit` and `replay` (`--bitchat-src DIR`):
/// the commands' option tables, `--help`, completion and the check of which system it belongs
/// to all read it from the system (``TestedSystem/options``), so a new system's option is
/// declared once, in its own file. One rule for every system's option (``rule``): giving it
/// selects the system that declares it.
public struct TestedSystemOption: Sendable, Equatable {
  /// What the option takes, for the parser and for completion.
  public enum Value: Sendable, Equatable {
    /// `--name`, no value.
    case flag
    case directory
    case file
    /// Free text (REPO@COMMIT, a name).
    case text
  }

  /// As the command line spells it, without the dashes.
  public let name: String
  /// What `--help` calls the value ("DIR"); empty for a flag.
  public let valueName: String
  /// One line for the option table.
  public let help: String
  public let value: Value

  public init(_ name: String, valueName: String = "", help: String, value: Value) {
    self.name = name
    self.valueName = value == .flag ? "" : valueName
    self.help = help
    self.value = value
  }

  /// The one rule, as `--help` and the README state it.
  public static let rule =
    "An option of a system selects it: alone it implies --sut SYSTEM; beside a --sut (or a "
    + "--compare) without SYSTEM it is a usage error naming both."

  /// "--bitchat-src DIR", "--app".
  public var usage: String { "--\(name)" + (valueName.isEmpty ? "" : " \(valueName)") }
}
