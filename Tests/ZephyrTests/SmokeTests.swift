import Testing
@testable import Zephyr
import ZephyrTesting

@Test func smoke() { #expect(true) }
