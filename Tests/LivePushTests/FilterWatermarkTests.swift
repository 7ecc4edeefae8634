import Foundation
@testable import LivePush
import XCTest

final class FilterWatermarkTests: XCTestCase {
    private var files: MediaTestFiles!
    /// 32×16: x < 12 opaque red, 12 ≤ x < 20 red at alpha 128, x ≥ 20 fully transparent green.
    private var logo: String!

    override func setUpWithError() throws {
        try XCTSkipUnless(MediaTestFiles.toolsAvailable, "ffmpeg/ffprobe not installed")
        files = try MediaTestFiles()
        logo = try files.make("logo.png", [
            "-f", "lavfi", "-i", "color=black:s=32x16", "-frames:v", "1", "-vf",
            "format=rgba,geq=r='if(lt(X,20),255,0)':g='if(lt(X,20),0,255)':b=0:a='if(lt(X,12),255,if(lt(X,20),128,0))'",
        ])
    }

    override func tearDown() {
        files = nil
    }

    // BT.601 limited range.
    private let red = (y: 81, u: 90, v: 240)
    private let background = (y: 50, u: 100, v: 150)

    private func makeFrame(_ format: VideoFrame.PixelFormat, width: Int = 128, height: Int = 96) throws -> VideoFrame {
        var frame = try VideoFrame(width: width, height: height, pixelFormat: format)
        for plane in 0..<frame.planeCount {
            let (bytes, rows) = frame.planeSize(plane), stride = frame.stride(ofPlane: plane)
            try frame.withMutablePlane(plane) { p in
                for y in 0..<rows {
                    for x in 0..<bytes {
                        p[y * stride + x] = UInt8(plane == 0 ? background.y
                            : format == .nv12 ? (x % 2 == 0 ? background.u : background.v)
                            : plane == 1 ? background.u : background.v)
                    }
                }
            }
        }
        return frame
    }

    /// Sample (x, y) of component 0 (Y), 1 (U) or 2 (V), in that component's own coordinates.
    private func sample(_ frame: VideoFrame, _ component: Int, _ x: Int, _ y: Int) -> Int {
        if component == 0 || frame.pixelFormat == .i420 {
            return frame.withPlane(component) { Int($0[y * frame.stride(ofPlane: component) + x]) }
        }
        return frame.withPlane(1) { Int($0[y * frame.stride(ofPlane: 1) + 2 * x + component - 1]) }
    }

    private func run(_ filter: WatermarkFilter, _ frame: inout VideoFrame) throws -> Bool {
        try filter.create(format: VideoFormat(width: frame.width, height: frame.height, pixelFormat: frame.pixelFormat, frameRate: 25))
        return try filter.process(&frame)
    }

    /// Checks every sample of every component: `expected(component, x, y)` gives the value
    /// inside the logo (nil where the picture must be exactly as it was).
    private func check(_ frame: VideoFrame, _ label: String, expected: (Int, Int, Int) -> Int?,
                       file: StaticString = #filePath, line: UInt = #line) {
        let bg = [background.y, background.u, background.v]
        var mismatches = 0
        for component in 0..<3 {
            let (w, h) = component == 0 ? (frame.width, frame.height) : (frame.width / 2, frame.height / 2)
            for y in 0..<h {
                for x in 0..<w {
                    let got = sample(frame, component, x, y)
                    let ok: Bool
                    if let want = expected(component, x, y) { ok = abs(got - want) <= 3 } else { ok = got == bg[component] }
                    if !ok {
                        mismatches += 1
                        if mismatches <= 5 {
                            XCTFail("\(label) component \(component) at (\(x), \(y)): \(got), want \(expected(component, x, y).map(String.init) ?? "untouched \(bg[component])")",
                                    file: file, line: line)
                        }
                    }
                }
            }
        }
        XCTAssertEqual(mismatches, 0, "\(label): mismatching samples", file: file, line: line)
    }

    /// Value expected at luma (x, y) / chroma (x, y) for the logo with its top-left at (ox, oy).
    private func logoValue(ox: Int, oy: Int, opacity: Double = 1) -> (Int, Int, Int) -> Int? {
        let redValues = [red.y, red.u, red.v], bgValues = [background.y, background.u, background.v]
        return { component, x, y in
            let scale = component == 0 ? 1 : 2
            let (lx, ly) = (x * scale - ox, y * scale - oy)
            guard lx >= 0, lx < 32, ly >= 0, ly < 16 else { return nil }
            let alpha = (lx < 12 ? 1.0 : lx < 20 ? 128.0 / 255 : 0) * opacity
            if alpha == 0 { return nil }
            let mixed = Double(bgValues[component]) * (1 - alpha) + Double(redValues[component]) * alpha
            return Int(mixed.rounded())
        }
    }

    func testTopRightLogoLandsWithExpectedColoursI420AndNV12() throws {
        for format in [VideoFrame.PixelFormat.i420, .nv12] {
            var frame = try makeFrame(format)
            let filter = try WatermarkFilter(path: logo)
            XCTAssertEqual(filter.image.width, 32)
            XCTAssertTrue(try run(filter, &frame))
            // 128 − 16 − 32 = 80, 16 from the top.
            check(frame, "\(format) top right", expected: logoValue(ox: 80, oy: 16))
            XCTAssertEqual(sample(frame, 0, 85, 20), red.y, accuracy: 3)
            XCTAssertEqual(sample(frame, 1, 42, 10), red.u, accuracy: 3)
            XCTAssertEqual(sample(frame, 2, 42, 10), red.v, accuracy: 3)
            // The transparent green part does not tint anything.
            XCTAssertEqual(sample(frame, 0, 105, 20), background.y)
            XCTAssertEqual(sample(frame, 1, 53, 10), background.u)
        }
    }

    func testHalfOpacityGivesTheMidpoint() throws {
        for format in [VideoFrame.PixelFormat.i420, .nv12] {
            var frame = try makeFrame(format)
            XCTAssertTrue(try run(WatermarkFilter(path: logo, position: .bottomLeft, margin: 8, opacity: 0.5), &frame))
            // x = 8, y = 96 − 8 − 16 = 72.
            check(frame, "\(format) half", expected: logoValue(ox: 8, oy: 72, opacity: 0.5))
            XCTAssertEqual(sample(frame, 0, 10, 80), (background.y + red.y) / 2, accuracy: 1)
            XCTAssertEqual(sample(frame, 1, 5, 40), (background.u + red.u) / 2, accuracy: 1)
            XCTAssertEqual(sample(frame, 2, 5, 40), (background.v + red.v) / 2, accuracy: 1)
        }
    }

    func testPositions() throws {
        func origin(_ position: WatermarkFilter.Position, margin: Int = 16) throws -> (Int, Int) {
            let o = try WatermarkFilter(path: logo, position: position, margin: margin).origin(width: 1280, height: 720)
            return (o.x, o.y)
        }
        XCTAssertTrue(try origin(.topLeft) == (16, 16))
        XCTAssertTrue(try origin(.topRight) == (1232, 16))
        XCTAssertTrue(try origin(.bottomLeft) == (16, 688))
        XCTAssertTrue(try origin(.bottomRight, margin: 0) == (1248, 704))
        XCTAssertTrue(try origin(.center) == (624, 352))
        XCTAssertTrue(try origin(.point(x: 101, y: 7)) == (100, 6), "rounded down to even")
        XCTAssertTrue(try origin(.topRight, margin: 17) == (1230, 16))

        var frame = try makeFrame(.i420)
        XCTAssertTrue(try run(WatermarkFilter(path: logo, position: .center), &frame))
        check(frame, "center", expected: logoValue(ox: 48, oy: 40))
    }

    func testClippedAtTheEdgesAndOutsideIsANoOp() throws {
        for format in [VideoFrame.PixelFormat.i420, .nv12] {
            var frame = try makeFrame(format)
            XCTAssertTrue(try run(WatermarkFilter(path: logo, position: .point(x: -6, y: -8)), &frame))
            check(frame, "\(format) clipped top-left", expected: logoValue(ox: -6, oy: -8))

            var corner = try makeFrame(format)
            XCTAssertTrue(try run(WatermarkFilter(path: logo, position: .point(x: 118, y: 90)), &corner))
            check(corner, "\(format) clipped bottom-right", expected: logoValue(ox: 118, oy: 90))

            var outside = try makeFrame(format)
            XCTAssertFalse(try run(WatermarkFilter(path: logo, position: .point(x: 500, y: 10)), &outside))
            check(outside, "\(format) outside", expected: { _, _, _ in nil })
            var invisible = try makeFrame(format)
            XCTAssertFalse(try run(WatermarkFilter(path: logo, opacity: 0), &invisible))
        }
    }

    func testSharedFrameIsNotModifiedAndSizeChangesAreFollowed() throws {
        let original = try makeFrame(.i420)
        var copy = original
        let filter = try WatermarkFilter(path: logo, position: .topLeft)
        XCTAssertTrue(try run(filter, &copy))
        check(original, "original", expected: { _, _, _ in nil })
        check(copy, "copy", expected: logoValue(ox: 16, oy: 16))

        // Created for 128×96 I420, then given a 64×48 NV12 frame: placed for the new size.
        var other = try makeFrame(.nv12, width: 64, height: 48)
        XCTAssertTrue(try filter.process(&other))
        check(other, "resized", expected: logoValue(ox: 16, oy: 16))
        filter.destroy()
    }

    func testBadImagesFailWithImageOpenFailed() throws {
        let text = files.path("logo.txt")
        try "not an image".write(toFile: text, atomically: true, encoding: .utf8)
        for path in [files.path("missing.png"), text] {
            XCTAssertThrowsError(try WatermarkFilter(path: path)) { error in
                XCTAssertEqual((error as? LivePushError)?.code, .imageOpenFailed)
            }
        }
    }

    func testRepositorySampleHasTransparency() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Media/watermark.png").path
        let image = try ImageLoader.loadRGBA(path: path)
        XCTAssertEqual(image.width, 160)
        XCTAssertEqual(image.height, 48)
        XCTAssertTrue(image.hasTransparency)
        XCTAssertTrue(stride(from: 3, to: image.pixels.count, by: 4).contains { image.pixels[$0] == 255 })
    }
}
