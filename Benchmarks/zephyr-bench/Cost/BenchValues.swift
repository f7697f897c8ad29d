import Foundation
import Zephyr
import ZephyrTesting

func key(_ index: Int) -> String { "setting.\(index)" }

/// A realistic mix: strings, numbers, flags, dates and small dictionaries.
func value(_ index: Int, version: Int = 0) -> PropertyListValue {
  switch index % 5 {
  case 0: .string("value \(index) v\(version)")
  case 1: .integer(Int64(index * 31 + version))
  case 2: .bool((index + version).isMultiple(of: 2))
  case 3: .date(Date(timeIntervalSince1970: Double(1_700_000_000 + index + version)))
  default: .dictionary(["name": .string("item \(index)"), "size": .integer(Int64(version)), "on": .bool(true)])
  }
}

func limits(for keys: Int) -> StoreLimits {
  keys <= 1_024 ? .iCloud : StoreLimits(maximumTotalBytes: 1 << 30, maximumKeyCount: 1 << 20, maximumKeyBytes: 64)
}
