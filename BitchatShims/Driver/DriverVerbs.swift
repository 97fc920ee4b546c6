// Generated from Sources/Vocabulary/ActionVerbs.swift: do not edit. Regenerate with
// FAILCLOSED_REGENERATE=1 swift test --filter VocabularyTests (a test holds the two equal).

/// The actions-file verbs bitchat's code acts on: name, argument field, its fallback.
let driverVerbs: [(name: String, field: String?, fallback: String?)] = [
  ("start", nil, nil),
  ("foreground", nil, nil),
  ("background", nil, nil),
  ("set-preference", "value", nil),
  ("revoke-activation", nil, nil),
  ("grant-activation", nil, nil),
  ("path-change", "status", "satisfied"),
  ("add-relay", "url", nil),
  ("send-message", "text", nil),
  ("refresh-directory", nil, nil),
  ("wait", "seconds", nil),
]
