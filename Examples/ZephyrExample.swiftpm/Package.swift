// swift-tools-version: 6.0

// An app package: open this folder in Xcode 16 or Swift Playgrounds 4.5 (or later) and run
// it on an iPhone or iPad, or in the simulator. It depends on the Zephyr package two folders
// up, by path.

import PackageDescription

#if canImport(AppleProductTypes)
  import AppleProductTypes

  let products: [Product] = [
    .iOSApplication(
      name: "ZephyrExample",
      targets: ["AppModule"],
      bundleIdentifier: "com.example.ZephyrExample",
      displayVersion: "1.0",
      bundleVersion: "1",
      appIcon: .placeholder(icon: .cloud),
      accentColor: .presetColor(.blue),
      supportedDeviceFamilies: [.pad, .phone],
      supportedInterfaceOrientations: [
        .portrait,
        .landscapeRight,
        .landscapeLeft,
        .portraitUpsideDown(.when(deviceFamilies: [.pad])),
      ]
    )
  ]
#else
  // Where there are no Apple product types (Linux), the package declares no app product.
  let products: [Product] = []
#endif

let package = Package(
  name: "ZephyrExample",
  platforms: [.iOS("17.0")],
  products: products,
  dependencies: [
    .package(name: "Zephyr", path: "../..")
  ],
  targets: [
    .executableTarget(
      name: "AppModule",
      dependencies: [
        .product(name: "Zephyr", package: "Zephyr"),
        .product(name: "ZephyrSwiftUI", package: "Zephyr"),
      ],
      path: "Sources"
    )
  ],
  swiftLanguageModes: [.v6]
)
