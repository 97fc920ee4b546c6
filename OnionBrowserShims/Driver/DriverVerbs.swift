// Generated from Sources/Vocabulary/ActionVerbs.swift: do not edit. Regenerate with
// FAILCLOSED_REGENERATE=1 swift test --filter VocabularyTests (a test holds the two equal).

/// The actions-file verbs Onion Browser's delegates act on: name, argument field, its fallback.
let harnessVerbs: [(name: String, field: String?, fallback: String?)] = [
  ("start", nil, nil),
  ("foreground", nil, nil),
  ("background", nil, nil),
  ("path-change", "status", "satisfied"),
  ("open-url", "url", nil),
  ("wait", "seconds", nil),
]
