/// A set-up the soak could not make.
struct SoakSetupError: Error, CustomStringConvertible {
  let message: String
  var description: String { message }
}
