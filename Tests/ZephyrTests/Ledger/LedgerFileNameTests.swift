import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Every domain gets a ledger file of its own: distinct names never share one.
struct LedgerFileNameTests {
  static let folder = URL(fileURLWithPath: "/ledgers", isDirectory: true)

  static func fileName(_ domainName: String) -> String {
    LedgerFile(directory: folder, domainName: domainName).url.lastPathComponent
  }

  /// Names that differ only where the old mapping wrote `_`, in case, in non-ASCII
  /// characters, in `%` and `~` (the encoding's own characters), or after 255 bytes.
  static let distinctNames: [String] = {
    let long = String(repeating: "a", count: 300)
    let longUnicode = String(repeating: "é", count: 300)
    return [
      "my settings", "my_settings", "my/settings", "my:settings", "my\u{0}settings", "my__settings", "my _settings",
      "Settings", "settings", "SETTINGS",
      "réglages", "r_glages", "rglages", "réglagés", "设置", "__", "_", "ü", "u\u{308}x",
      "%", "%25", "%%", "~", "~25", "~%7E", "%7E", "a b", "a%20b", "~a%20b", "a%2520b", "~~", "~~a",
      "", ".", "..", "-", "a.b", "a-b",
      long, String(long.dropLast()) + "b", "b" + String(long.dropFirst()), long + " ", long + "_", " " + long,
      String(repeating: "a", count: 241), String(repeating: "a", count: 242), " " + String(repeating: "a", count: 239),
      " " + String(repeating: "a", count: 240), longUnicode, longUnicode + "é", String(longUnicode.dropLast()) + "e",
    ]
  }()

  @Test func distinctNamesGetDistinctFiles() throws {
    #expect(Set(Self.distinctNames).count == Self.distinctNames.count, "the names themselves are distinct")
    var owners: [String: String] = [:]
    for name in Self.distinctNames {
      let file = Self.fileName(name)
      #expect(file.utf8.count <= 255, "\(name.prefix(20))… makes a \(file.utf8.count)-byte file name")
      #expect(!file.contains("/") && !file.contains("\u{0}"), "\(name.prefix(20))")
      if let owner = owners[file] {
        Issue.record("\"\(owner.prefix(40))\" and \"\(name.prefix(40))\" share the file \(file.prefix(60))")
      }
      owners[file] = name
    }
  }

  /// The file names are distinct on disk too, where `%` and the 255-byte limit matter.
  @Test func distinctNamesGetDistinctFilesOnDisk() throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("zephyr-tests.names.\(UUID().uuidString.prefix(8))", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    // Every domain's ledger of this process is in one subfolder.
    let processFolder = LedgerFile(directory: folder, domainName: "x").url.deletingLastPathComponent()
    try FileManager.default.createDirectory(at: processFolder, withIntermediateDirectories: true)
    for name in Self.distinctNames {
      let url = LedgerFile(directory: folder, domainName: name).url
      #expect(throws: Never.self, "\(name.prefix(20))") { try Data(name.utf8).write(to: url) }
    }
    let files = try FileManager.default.contentsOfDirectory(atPath: processFolder.path)
    #expect(files.count == Self.distinctNames.count)
    for name in Self.distinctNames {
      let url = LedgerFile(directory: folder, domainName: name).url
      #expect(files.contains(url.lastPathComponent), "\(name.prefix(20))")
      #expect((try? Data(contentsOf: url)) == Data(name.utf8), "\(name.prefix(20))")
    }
  }

  /// Names made of ASCII letters, digits, `.` and `-` are used as they are.
  @Test func safeNamesAreUnchanged() {
    let names = [
      "com.example.app", "group.com.Example.App-2", "zephyr-tests.1A2B3C4D.A", "", ".", "..",
      String(repeating: "a", count: 241),
    ]
    for name in names {
      #expect(Self.fileName(name) == name + ".zephyr-ledger", "\(name.prefix(20))")
    }
  }

  /// Names are a pure function of the domain name: the same in every process.
  @Test func namesAreStable() {
    let long = String(repeating: "a", count: 300)
    #expect(Self.fileName("my settings") == "~my%20settings.zephyr-ledger")
    #expect(Self.fileName("réglages_2") == "~r%C3%A9glages%5F2.zephyr-ledger")
    #expect(
      Self.fileName(long)
        == "~~ef07127be1f9b7ddba57177fce2a24d9~" + String(repeating: "a", count: 206) + ".zephyr-ledger")
  }

  /// Long names are told apart by 128-bit FNV-1a, checked against its published values.
  @Test func hashIsFNV1a128() {
    var hash = FNV1a128()
    #expect(hash.hexDigits == "6c62272e07bb014262b821756295c58d")
    hash.bytes("a".utf8)
    #expect(hash.hexDigits == "d228cb696f1a8caf78912b704e4a8964")
  }

  /// Two suites whose names differ only where a lossy mapping would write `_` keep a
  /// ledger each: sharing one, after a relaunch one of them would lose its history, and
  /// with it a local edit (a device without history takes the cloud's value over its own).
  @Test func suitesWithCollidingOldNamesEachKeepTheirHistory() throws {
    let harness = Harness(suitePrefix: "zephyr-test \(UUID().uuidString.prefix(8))")
    let spaced = harness.device("my settings", monitored: ["theme"])
    let underscored = harness.device("my_settings", monitored: ["font"])
    let peer = harness.device("peer", monitored: ["theme", "font"])
    #expect(spaced.coordinator.engine.ledgerFile.url != underscored.coordinator.engine.ledgerFile.url)

    spaced.set(.string("dusk"), "theme")
    underscored.set(.string("serif"), "font")
    spaced.coordinator.sync()
    underscored.coordinator.sync()
    harness.round()
    #expect(peer.value("theme") == .string("dusk"))
    #expect(peer.value("font") == .string("serif"))

    // Relaunch, then edit locally while the cloud still holds the old values.
    spaced.restart()
    underscored.restart()
    for device in [spaced, underscored] {
      #expect(!device.coordinator.status.notes.contains { $0.contains("another copy") }, "\(device.name)")
    }
    #expect(spaced.coordinator.engine.state.withLock { $0.ledger["theme"] } != nil)
    #expect(underscored.coordinator.engine.state.withLock { $0.ledger["font"] } != nil)
    spaced.set(.string("night"), "theme")
    underscored.set(.string("mono"), "font")
    spaced.coordinator.sync()
    underscored.coordinator.sync()
    harness.round()

    #expect(spaced.value("theme") == .string("night"), "the local edit survived")
    #expect(underscored.value("font") == .string("mono"), "the local edit survived")
    #expect(peer.value("theme") == .string("night"))
    #expect(peer.value("font") == .string("mono"))
  }
}
