import Synchronization

/// A regular expression compiled once, then matched from any thread: the fixed field patterns
/// are statics (``FieldPatterns``), a program's `output` REGEX is compiled when its file is
/// parsed and kept in its ``ProgramSpec/Success``. Regex is not Sendable, so a match runs under
/// this pattern's own lock (never one lock for every pattern).
final class CompiledPattern: Sendable, Equatable {
  /// The pattern as written.
  let source: String
  private let regex: Mutex<Regex<AnyRegexOutput>>

  /// Nil when `source` is not a regular expression.
  init?(_ source: String) {
    guard let regex = try? Regex(source) else { return nil }
    self.source = source
    self.regex = Mutex(regex)
    Self.compiled.withLock { $0[source, default: 0] += 1 }
  }

  /// The whole of `text` matches.
  func matchesWhole(_ text: String) -> Bool {
    regex.withLock { (try? $0.wholeMatch(in: text)) != nil }
  }

  /// Some part of `text` matches.
  func matchesPart(of text: String) -> Bool {
    regex.withLock { text.contains($0) }
  }

  static func == (lhs: CompiledPattern, rhs: CompiledPattern) -> Bool {
    lhs.source == rhs.source
  }

  /// How many times `source` was compiled in this process: counted so tests hold parsing and
  /// judging to compiling each pattern once.
  static func compilations(of source: String) -> Int {
    compiled.withLock { $0[source] ?? 0 }
  }

  private static let compiled = Mutex<[String: Int]>([:])
}
