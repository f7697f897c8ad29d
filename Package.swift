// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Zephyr",
  platforms: [.iOS(.v17), .macOS(.v14), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
  products: [
    .library(name: "Zephyr", targets: ["Zephyr"]),
    .library(name: "ZephyrTesting", targets: ["ZephyrTesting"]),
    // SwiftUI's `@SyncedDefault`; compiles to an empty module where SwiftUI does not exist.
    .library(name: "ZephyrSwiftUI", targets: ["ZephyrSwiftUI"]),
    .executable(name: "zephyr-demo", targets: ["zephyr-demo"]),
    .executable(name: "zephyr-bench", targets: ["zephyr-bench"]),
  ],
  targets: [
    // The system zlib, for raw DEFLATE off Apple platforms (Apple's Compression is used there).
    .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"]), .yum(["zlib-devel"])]),
    .target(name: "Zephyr", dependencies: [.target(name: "CZlib", condition: .when(platforms: [.linux, .android]))]),
    .target(name: "ZephyrTesting", dependencies: ["Zephyr"]),
    .target(name: "ZephyrSwiftUI", dependencies: ["Zephyr"]),
    .executableTarget(name: "zephyr-demo", dependencies: ["Zephyr", "ZephyrTesting"], path: "Examples/zephyr-demo"),
    .executableTarget(name: "zephyr-bench", dependencies: ["Zephyr", "ZephyrTesting"], path: "Benchmarks/zephyr-bench"),
    .testTarget(name: "ZephyrTests", dependencies: ["Zephyr", "ZephyrTesting"]),
  ],
  swiftLanguageModes: [.v6]
)
