import Foundation
import XCTest

/// GStreamer is a run-time dependency of WHIP outputs only (issue 36): the shim dlopens it at
/// the first WHIP output, so `livepush` links none of it, nothing builds against its headers,
/// and a WHIP push on a machine without one of its packages fails with a coded error naming it.
final class GStreamerAtRunTimeTests: XCTestCase {
    private static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// GStreamer's libraries, and GLib's, by the start of their file names.
    private static let gstreamer = ["libgst"]
    private static let glib = ["libglib-2.0", "libgobject-2.0", "libgio-2.0", "libgmodule-2.0"]

    /// No GStreamer library is loaded with `livepush`, and no GLib one is asked for by it: GLib
    /// may still come in through Debian's FFmpeg (libavcodec needs librsvg, which needs GLib),
    /// so each GLib library `ldd` shows must be one an FFmpeg library brings.
    func testTheBinaryLinksNoGStreamer() throws {
        let binary = try XCTUnwrap(LivePushCLI.binary, "livepush executable not found next to the test bundle")
        let loaded = try Self.ldd(binary)
        XCTAssertFalse(loaded.isEmpty, "ldd listed nothing for \(binary)")
        XCTAssertEqual(loaded.filter { name in Self.gstreamer.contains { name.hasPrefix($0) } }, [], "GStreamer is loaded only at a WHIP output")

        let needed = try Self.needed(binary)
        XCTAssertTrue(needed.contains { $0.hasPrefix("libavcodec") }, "readelf read the NEEDED entries: \(needed)")
        XCTAssertEqual(needed.filter { name in (Self.gstreamer + Self.glib).contains { name.hasPrefix($0) } }, [],
                       "livepush itself asks for no GStreamer or GLib library")
        let glibLoaded = loaded.filter { name in Self.glib.contains { name.hasPrefix($0) } }
        if !glibLoaded.isEmpty {
            let fromFFmpeg = try Set(needed.filter { $0.hasPrefix("libav") || $0.hasPrefix("libsw") }.flatMap { library in
                try Self.ldd(try Self.resolve(library, in: binary))
            })
            XCTAssertEqual(glibLoaded.filter { !fromFFmpeg.contains($0) }, [], "GLib comes only through FFmpeg's own dependencies")
        }
    }

    /// Nothing in the package builds against GStreamer or GLib: no pkg-config of theirs in the
    /// manifest (so `swift build` needs none of their dev packages) and no header of theirs in
    /// the shim. Read from the sources: a second build without GStreamer's .pc files is too slow
    /// for the suite (the README says how to try it by hand).
    func testNothingBuildsAgainstGStreamer() throws {
        let manifest = try String(contentsOf: Self.repo.appendingPathComponent("Package.swift"), encoding: .utf8)
        for line in manifest.split(separator: "\n") where line.contains("pkgConfig:") {
            XCTAssertFalse(line.contains("gstreamer") || line.contains("glib") || line.contains("gobject"), String(line))
        }
        XCTAssertFalse(manifest.contains("CGStreamer"))
        let shim = Self.repo.appendingPathComponent("Sources/CWebRTC")
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: shim.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".c") || $0.hasSuffix(".h") }
        XCTAssertGreaterThanOrEqual(files.count, 5, "\(files)")
        for file in files {
            let text = try String(contentsOf: shim.appendingPathComponent(file), encoding: .utf8)
            for include in ["<gst/", "<glib", "<gio/", "<glib-object.h>"] {
                XCTAssertFalse(text.contains("#include " + include), "\(file) includes \(include)")
            }
        }
    }

    /// A WHIP push where GStreamer's WebRTC library is missing (the test hook makes its dlopen
    /// fail): a coded error naming the file and its package, not retried, exit non-zero.
    func testAWHIPPushWithoutGStreamersWebRTCLibraryNamesItsPackage() throws {
        try assertWHIPPushFails(missing: "libgstwebrtc-1.0.so.0",
                                saying: ["libgstwebrtc-1.0.so.0 is missing", "libgstreamer-plugins-bad1.0-0"])
    }

    /// The same for a plugin the registry does not find: libnice's elements.
    func testAWHIPPushWithoutTheNicePluginNamesItsPackage() throws {
        try assertWHIPPushFails(missing: "nicesrc", saying: ["element nicesrc is missing", "gstreamer1.0-nice"])
    }

    private func assertWHIPPushFails(missing: String, saying expected: [String], line: UInt = #line) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["LIVEPUSH_TEST_GSTREAMER_MISSING"] = missing
        // Nothing listens there: the push must fail before any request, at the first WHIP output.
        let result = try LivePushCLI.run(["push", TestMedia.path(.h264AAC), "http://127.0.0.1:9/whip/endpoint", "--json"],
                                         timeout: 60, environment: environment)
        XCTAssertFalse(result.timedOut || result.terminatedBySignal, result.summary, line: line)
        XCTAssertNotEqual(result.exitCode, 0, result.summary, line: line)
        let all = result.stdoutString + result.stderrString
        XCTAssertTrue(all.contains("webrtcUnavailable"), all, line: line)
        XCTAssertTrue(all.contains("805440008") || all.contains("0x30020a08"), all, line: line)
        for text in expected { XCTAssertTrue(all.contains(text), "\(text) in: \(all)", line: line) }
        XCTAssertFalse(all.contains("retryScheduled") || all.contains("reconnectStarted"), "a missing package is not retried: \(all)",
                       line: line)
    }

    // MARK: - Reading the binary

    /// The file names of what `ldd` says `path` loads.
    private static func ldd(_ path: String) throws -> [String] {
        let result = try ProcessRunner.run("ldd", [path], timeout: 30)
        guard result.succeeded else {
            XCTFail("ldd failed: \(result.summary)")
            return []
        }
        return result.stdoutString.split(separator: "\n").compactMap { line in
            line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map { String($0.split(separator: "/").last ?? $0) }
        }
    }

    /// The NEEDED entries of `path`'s dynamic section.
    private static func needed(_ path: String) throws -> [String] {
        let result = try ProcessRunner.run("readelf", ["-d", path], timeout: 30)
        guard result.succeeded else {
            XCTFail("readelf failed: \(result.summary)")
            return []
        }
        return result.stdoutString.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            guard let open = line.lastIndex(of: "["), let close = line.lastIndex(of: "]"), open < close else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    /// Where `ldd` found `library` for `binary`.
    private static func resolve(_ library: String, in binary: String) throws -> String {
        let result = try ProcessRunner.run("ldd", [binary], timeout: 30)
        let line = try XCTUnwrap(result.stdoutString.split(separator: "\n").first { $0.contains(library + " => ") })
        let path = try XCTUnwrap(line.split(separator: " ").first { $0.hasPrefix("/") })
        return String(path)
    }
}
