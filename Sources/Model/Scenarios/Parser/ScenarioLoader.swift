import Foundation

/// Loads scenario files one by one: a malformed file yields its error and the others still
/// load, so one typo never stops the rest of the audit.
public enum ScenarioLoader {
  /// One file's outcome.
  public struct Loaded: Sendable {
    public let file: String
    public let result: Result<Scenario, ScenarioError>
  }

  /// The `.json` files of `directory` (not the schema), sorted by name.
  public static func scenarioFiles(in directory: String) throws -> [String] {
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
    return names.filter { $0.hasSuffix(".json") && !$0.hasSuffix(".schema.json") }.sorted()
      .map { directory.hasSuffix("/") ? directory + $0 : directory + "/" + $0 }
  }

  /// Loads each file; directories in `paths` are expanded to their scenario files.
  public static func load(_ paths: [String]) -> [Loaded] {
    var files: [String] = []
    var results: [Loaded] = []
    for path in paths {
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
        isDirectory.boolValue
      {
        do {
          files += try scenarioFiles(in: path)
        } catch {
          results.append(
            Loaded(
              file: path,
              result: .failure(
                ScenarioError(file: path, path: "", message: "cannot list directory: \(error)"))))
        }
      } else {
        files.append(path)
      }
    }
    for file in files {
      results.append(Loaded(file: file, result: loadFile(file)))
    }
    return results
  }

  public static func loadFile(_ file: String) -> Result<Scenario, ScenarioError> {
    // The size first, so a huge file is refused without being read.
    if let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int,
      size > ScenarioParser.maximumFileBytes
    {
      return .failure(
        ScenarioError(
          file: file, path: "",
          message:
            "the file is \(size) bytes; a scenario may be at most \(ScenarioParser.maximumFileBytes) bytes"
        ))
    }
    guard let data = FileManager.default.contents(atPath: file) else {
      return .failure(ScenarioError(file: file, path: "", message: "cannot read the file"))
    }
    guard let text = String(data: data, encoding: .utf8) else {
      return .failure(ScenarioError(file: file, path: "", message: "not UTF-8 text"))
    }
    do {
      return .success(try ScenarioParser.parse(text, file: file))
    } catch {
      return .failure(error)
    }
  }
}
