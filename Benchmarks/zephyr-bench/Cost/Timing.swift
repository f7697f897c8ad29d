import Foundation
import Zephyr
import ZephyrTesting

func nanoseconds(_ body: () -> Void) -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  body()
  return Double(DispatchTime.now().uptimeNanoseconds - start)
}

func median(_ samples: [Double]) -> Double {
  let sorted = samples.sorted()
  return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func milliseconds(_ nanoseconds: Double) -> Double { (nanoseconds / 1e4).rounded() / 100 }

func ratio(_ part: Double, _ whole: Double) -> Double { whole > 0 ? (part / whole * 1000).rounded() / 1000 : 0 }
