// Extracts the fenced ```swift blocks of Markdown files into compile-only modules, one
// folder each (Snippet.swift and Prelude.swift), and writes a manifest: one line per block,
// "<folder> <kind> <file>:<line>". Used by .ci/snippets (on Linux) and by
// Scripts/apple-typecheck (the apple-only blocks, against Apple's SDKs).
//
// Usage: swift .ci/snippets-extract.swift <output folder> <kinds to write, comma-separated> <file.md>...
import Foundation

// Names the articles use without declaring them. Each is left out of a block's prelude
// when the block declares that name at file scope itself.
let prelude: [(name: String, code: String)] = [
  ("Settings", """
    enum Settings {
      static let theme = SyncKey<String>("theme", default: "light")
      static let fontSize = SyncKey<Double>("fontSize", default: 14)
      static let favorites = SyncKey<[String]>("favorites", default: [], merge: .set)
      static let highScore = SyncKey<Int>("highScore", default: 0, merge: .max)
      static let nickname = SyncKey<String?>("nickname")
      static let readArticles = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set(capacity: 20_000))
    }
    """),
  ("Layout", "struct Layout: Codable, SyncValue { var columns = 2 }"),
  ("apply", "func apply<T>(_ value: T) {}"),
  ("showOnboarding", "func showOnboarding() {}"),
  ("suite", "nonisolated(unsafe) let suite = UserDefaults.standard"),
  ("configuration", "nonisolated(unsafe) var configuration = SyncConfiguration()"),
  ("coordinator", """
    let coordinator = SyncCoordinator(
      defaults: UserDefaults.standard, store: SimulatedCloud().device("A"))
    """),
  ("cloud", "let cloud = SimulatedCloud()"),
  ("a", "let a = SyncCoordinator(defaults: UserDefaults.standard, store: SimulatedCloud().device(\"A\"))"),
  ("b", "let b = SyncCoordinator(defaults: UserDefaults.standard, store: SimulatedCloud().device(\"B\"))"),
  ("articleID", "let articleID: UInt32 = 42"),
  ("otherID", "let otherID: UInt32 = 7"),
  ("batch", "let batch: [UInt32] = [1, 2, 3]"),
  // For the apple-only blocks (checked by Scripts/apple-typecheck).
  ("ContentView", """
    #if canImport(SwiftUI)
      import SwiftUI

      struct ContentView: View { var body: some View { Text("Hello") } }
    #endif
    """),
  ("SignInToSyncCard", """
    #if canImport(SwiftUI)
      import SwiftUI

      struct SignInToSyncCard: View {
        var dismiss: () -> Void
        var body: some View { Button("Sign in to iCloud", action: dismiss) }
      }
    #endif
    """),
]

let markers = ["context", "fragment", "apple-only", "does-not-compile"]
let declarationStart =
  #/^(@[A-Za-z]+(\([^)]*\))?\s+)*(public |private |fileprivate |internal |final |nonisolated |indirect )*(import|struct|enum|class|actor|extension|protocol|func|typealias|macro)\b/#
let attributesOnly = #/(@[A-Za-z]+(\([^)]*\))?\s*)+/#
let continuationStart = #/^(\.|\)|\]|\}|&&|\|\||\?|:|=|\+|-|\*|else\b|catch\b|where\b)/#

/// Splits a block into its file-scope declarations and its statements, by chunks that
/// start at brace depth 0; comments and blank lines go with the chunk that follows them.
func split(_ lines: [String]) -> (imports: [String], declarations: [String], statements: [String]) {
  var imports: [String] = [], declarations: [String] = [], statements: [String] = []
  var pending: [String] = []
  var chunk: [String] = []
  var chunkIsDeclaration = false
  var depth = 0
  func flush() {
    guard !chunk.isEmpty else { return }
    if chunk.count == 1, chunk[0].hasPrefix("import ") {
      imports.append(chunk[0])
    } else if chunkIsDeclaration {
      declarations += chunk
    } else {
      statements += chunk
    }
    chunk = []
  }
  for line in lines {
    let trimmed = line.trimmingCharacters(in: .whitespaces)
    // A line of attributes alone (`@main`) goes with the declaration below it, as comments do.
    let isAttributes = trimmed.wholeMatch(of: attributesOnly) != nil
    let isCode = !trimmed.isEmpty && !trimmed.hasPrefix("//") && !(depth == 0 && isAttributes)
    if depth == 0 && isCode && trimmed.firstMatch(of: continuationStart) == nil {
      flush()
      chunk = pending
      pending = []
      chunkIsDeclaration = trimmed.firstMatch(of: declarationStart) != nil
    }
    if isCode || depth > 0 {
      chunk += pending
      pending = []
      chunk.append(line)
    } else {
      pending.append(line)
    }
    // Braces, brackets and parentheses outside string literals and comments.
    var inString = false
    var previous: Character = " "
    for character in line {
      if inString {
        if character == "\"" && previous != "\\" { inString = false }
      } else if character == "\"" {
        inString = true
      } else if character == "/" && previous == "/" {
        break
      } else if "{[(".contains(character) {
        depth += 1
      } else if "}])".contains(character) {
        depth -= 1
      }
      previous = character
    }
  }
  chunk += pending
  flush()
  return (imports, declarations, statements)
}

func declaredNames(_ declarations: [String]) -> Set<String> {
  var names = Set<String>()
  let declaration = #/^\s*(@[A-Za-z]+(\([^)]*\))?\s+)*(public |private |final |nonisolated\(unsafe\) |nonisolated )*(struct|enum|class|actor|protocol|func|typealias|let|var)\s+([A-Za-z_][A-Za-z0-9_]*)/#
  for line in declarations {
    if let match = line.firstMatch(of: declaration) { names.insert(String(match.output.5)) }
  }
  return names
}

let output = URL(fileURLWithPath: CommandLine.arguments[1])
let kindsToWrite = Set(CommandLine.arguments[2].split(separator: ",").map(String.init))
var manifest: [String] = []
var index = 0
for path in CommandLine.arguments.dropFirst(3) {
  // The file-scope declarations of this file's `context` blocks so far, for the blocks after them.
  var context: [(names: Set<String>, code: [String])] = []
  let lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
  var number = 0
  var marker: String?
  while number < lines.count {
    let line = lines[number]
    let trimmed = line.trimmingCharacters(in: .whitespaces)
    if let match = trimmed.firstMatch(of: #/^<!--\s*snippet:\s*([a-z-]+)\s*-->$/#) {
      marker = String(match.output.1)
      guard markers.contains(marker!) else {
        print("error: \(path):\(number + 1): unknown snippet marker \(marker!) (\(markers.joined(separator: ", ")))")
        exit(1)
      }
      number += 1
      continue
    }
    guard trimmed == "```swift" else {
      if !trimmed.isEmpty { marker = nil }
      number += 1
      continue
    }
    let start = number + 1
    var end = start
    while end < lines.count && lines[end].trimmingCharacters(in: .whitespaces) != "```" { end += 1 }
    let indent = line.prefix { $0 == " " }.count
    let body = lines[start..<end].map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
    index += 1
    let name = String(format: "%03d", index)
    let location = "\(path):\(start)"
    let kind = marker ?? "compile"
    manifest.append("\(name) \(kind) \(location)")
    if kindsToWrite.contains(kind) {
      let (imports, declarations, statements) = split(body)
      let source = body.joined(separator: "\n")
      var header = ["import Foundation", "import Zephyr", "import ZephyrTesting"]
      if source.contains("@Test") || source.contains("#expect") || source.contains("#require") {
        header.append("import Testing")
      }
      for line in imports where !header.contains(line.trimmingCharacters(in: .whitespaces)) {
        header.append(line.trimmingCharacters(in: .whitespaces))
      }
      var file = ["// \(location)"] + header + [""] + declarations
      if statements.contains(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) {
        file += ["", "@MainActor func snippet() async throws {"] + statements.map { "  " + $0 } + ["}"]
      }
      let declared = declaredNames(declarations)
      let shared = context.filter { $0.names.isDisjoint(with: declared) }
      let taken = declared.union(shared.flatMap(\.names))
      var preludeFile = ["import Foundation", "import Zephyr", "import ZephyrTesting"]
      if source.contains("@Test") || source.contains("#expect") || source.contains("#require")
        || shared.contains(where: { $0.code.joined().contains("#require") })
      {
        preludeFile.append("import Testing")
      }
      preludeFile += [""] + prelude.filter { !taken.contains($0.name) }.map(\.code) + shared.flatMap(\.code)
      if kind == "context" { context.append((declared, declarations)) }
      let folder = output.appendingPathComponent(name)
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      try (file.joined(separator: "\n") + "\n").write(
        to: folder.appendingPathComponent("Snippet.swift"), atomically: true, encoding: .utf8)
      try (preludeFile.joined(separator: "\n") + "\n").write(
        to: folder.appendingPathComponent("Prelude.swift"), atomically: true, encoding: .utf8)
    }
    marker = nil
    number = end + 1
  }
}
try (manifest.joined(separator: "\n") + "\n").write(
  to: output.appendingPathComponent("manifest"), atomically: true, encoding: .utf8)
