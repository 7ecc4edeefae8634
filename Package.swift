// swift-tools-version:6.1
import Foundation
import PackageDescription

let package = Package(
    name: "LivePush",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LivePush", targets: ["LivePush"]),
        // The receiver and fault-injecting loopback live in their own product so that
        // production builds of an app do not link them.
        .library(name: "LivePushLoopback", targets: ["LivePushLoopback"]),
        .executable(name: "livepush", targets: ["livepush"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // No traits: "FullFoundation" links Foundation and ICU into every process (~6 MiB and
        // part of start-up; FoundationEssentials is enough), "ConfigurationSupport" builds
        // swift-configuration, which nothing here reads.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `swift package generate-documentation` / `preview-documentation` (the DocC catalogues).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CRTMP",
            pkgConfig: "librtmp",
            providers: [.apt(["librtmp-dev"])]
        ),
        // rtmps:// runs its TLS handshake and certificate check itself (librtmp verifies nothing).
        .systemLibrary(
            name: "CGnuTLS",
            pkgConfig: "gnutls",
            providers: [.apt(["libgnutls28-dev"])]
        ),
        // SRT outputs: libsrt itself (its statistics, non-blocking sends); FFmpeg's srt protocol hides both.
        .systemLibrary(
            name: "CSRT",
            pkgConfig: "srt",
            providers: [.apt(["libsrt-gnutls-dev"])]
        ),
        // WHIP outputs: GStreamer's webrtcbin (ICE, DTLS-SRTP, RTP/RTCP), driven by the C shim
        // CWebRTC; nothing above the shim sees a GStreamer type. The shim declares the little of
        // GStreamer it calls and dlopens it at the first WHIP output: no GStreamer headers or
        // pkg-config at build time, no GStreamer library in a process that has no WHIP output.
        .target(
            name: "CWebRTC",
            dependencies: ["CGnuTLS"],
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]  // dlopen: libc's own from glibc 2.34
        ),
        // Text overlays: fontconfig finds the font (Debian fonts-dejavu-core), FreeType renders
        // the glyphs once per text change (``TextRasterizer``); nothing above it sees a C type.
        .systemLibrary(
            name: "CFreeType",
            pkgConfig: "freetype2 fontconfig",
            providers: [.apt(["libfreetype-dev", "libfontconfig-dev"])]
        ),
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat libavcodec libavutil libswresample libswscale",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev", "libswscale-dev"])]
        ),
        // Wire formats shared by the pusher and the loopback: AMF0, FLV tags, the RTMP handshake,
        // chunking and command messages.
        .target(name: "LivePushWire"),
        .target(
            name: "LivePush",
            dependencies: [
                "CRTMP", "CGnuTLS", "CSRT", "CWebRTC", "CFFmpeg", "CFreeType", "LivePushWire",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "LivePushLoopback",
            dependencies: [
                "LivePush",
                "LivePushWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "livepush",
            dependencies: [
                "LivePush",
                "LivePushLoopback",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // The playout control endpoint (--control): HTTP with JSON on 127.0.0.1.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // Runnable examples (Examples/<name>/main.swift): short programs for a newcomer to read,
        // built by `swift build` like everything else and each run by a test (ExamplesTests).
        .executableTarget(name: "example-pusher", dependencies: ["LivePush"], path: "Examples/Pusher"),
        .executableTarget(name: "example-frames", dependencies: ["LivePush"], path: "Examples/Frames"),
        .executableTarget(name: "example-loopback-test", dependencies: ["LivePush", "LivePushLoopback"],
                          path: "Examples/LoopbackTest"),
        .executableTarget(name: "example-playout-control", dependencies: ["LivePush"], path: "Examples/PlayoutControl"),
        .testTarget(
            name: "LivePushTests",
            dependencies: [
                "LivePush", "LivePushWire", "LivePushLoopback",
                // AppFuzzSupport drives the receiver's pipeline on an EmbeddedChannel.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "LivePushIntegrationTests",
            dependencies: ["LivePush", "LivePushLoopback", "LivePushWire"],
            exclude: ["Support/auth_server.py", "Support/trickle_relay.py", "Support/ertmp_listener.py", "Support/whip_endpoint.py",
                      "Support/tls_terminator.py", "Support/hls_origin.py", "Support/hls_upload_origin.py"]
        ),
    ]
)

// The libFuzzer binary of the app-level targets (scripts/fuzz-app.sh): only with LIVEPUSH_FUZZ set, so
// that `swift build` and `swift test` never see an executable whose main libFuzzer provides.
if ProcessInfo.processInfo.environment["LIVEPUSH_FUZZ"] != nil {
    package.targets.append(.executableTarget(
        name: "LivePushFuzz",
        dependencies: [
            "LivePush", "LivePushLoopback", "LivePushWire",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ],
        path: "Tests/FuzzHarness",
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    ))
}
