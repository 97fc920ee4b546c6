/// What a unit's parser reads: the expectation's object, and what its checks need from the
/// rest of the file (the run's duration, the app's profile for event names).
public struct ExpectationInput {
  let reader: FieldReader
  let duration: Double
  let profile: AppPlan.Profile?

  var file: String { reader.file }

  /// A time field; a time past the end of the run is trivially met (or missed): an error,
  /// not a no-op.
  func time(_ key: String, required: Bool = false) throws(ScenarioError) -> Double? {
    let t = try reader.seconds(key, required: required)
    if let t, t > duration {
      throw reader.fail(
        key,
        ScenarioParser.afterEnd(t, duration) + ": the expectation could never be judged there")
    }
    return t
  }

  /// An event pattern field, checked against the events the profile can emit.
  func pattern(_ key: String) throws(ScenarioError) -> String {
    let text = try reader.string(key)!
    if let problem = ScenarioEventCatalogue.problem(in: EventPattern(text), profile: profile) {
      throw reader.fail(key, problem)
    }
    return text
  }
}
