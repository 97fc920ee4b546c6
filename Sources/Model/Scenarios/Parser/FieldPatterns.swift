/// ``ScenarioParser/Pattern``'s spellings compiled, each once in the process however many
/// fields and files use it: every file of the library is parsed even under --filter, and
/// compiling per field was a tenth of a one-scenario run's CPU.
enum FieldPatterns {
  static let bootstrapPlan = CompiledPattern(ScenarioParser.Pattern.bootstrapPlan)!
  static let destination = CompiledPattern(ScenarioParser.Pattern.destination)!
  static let host = CompiledPattern(ScenarioParser.Pattern.host)!
}
