import Scenarios

/// The project's model of each app (bitchat's rules, the hardened variant, the naive-port
/// canary, Onion Browser's versions), on the run's clock. Files with the bitchat-source
/// profile still run on bitchat's code when a checkout is there; without one they are left
/// out with a note.
public enum ModelSystem {
  public static let entry = TestedSystem(
    name: "model",
    summary: "the project's model of each app (default)",
    refusal: "is a program scenario: it needs a command (leak-audit --app -- CMD)",
    comparison: TestedSystemComparison(plays: [
      .init(.bitchat, files: bitchatFiles), .init(.hardened, files: bitchatFiles),
      .init(.onionBrowser2, files: [.onionBrowser2]),
      .init(.onionBrowser3, files: [.onionBrowser3, .onionBrowser]),
    ]),
    adopt: { $0.app.profile == .program ? nil : $0 },
    prepare: { scenarios, inputs in
      BitchatSourceSystem.prepare(scenarios, inputs: inputs, substituting: false)
    })

  /// The files a comparison runs as bitchat or hardened: one app, its rules fixed or not (the
  /// naive-port canary and bitchat-source files are not the model's bitchat).
  static let bitchatFiles: Set<AppPlan.Profile> = [.bitchat, .hardened]
}
