import Foundation
@testable import LivePush
import XCTest

final class FilterBeautyTests: XCTestCase {
    /// A frame whose pixel (x, y) of each plane is `value(plane, x, y)`.
    private func makeFrame(_ width: Int, _ height: Int, _ format: VideoFrame.PixelFormat = .i420,
                           _ value: (Int, Int, Int) -> Int) throws -> VideoFrame {
        var frame = try VideoFrame(width: width, height: height, pixelFormat: format)
        for plane in 0..<frame.planeCount {
            let (bytes, rows) = frame.planeSize(plane), stride = frame.stride(ofPlane: plane)
            try frame.withMutablePlane(plane) { p in
                for y in 0..<rows { for x in 0..<bytes { p[y * stride + x] = UInt8(clamping: value(plane, x, y)) } }
            }
        }
        return frame
    }

    /// Plane `index` without row padding.
    private func pixels(_ frame: VideoFrame, _ index: Int) -> [UInt8] {
        let (bytes, rows) = frame.planeSize(index), stride = frame.stride(ofPlane: index)
        return frame.withPlane(index) { p in (0..<rows).flatMap { y in p[y * stride..<y * stride + bytes] } }
    }

    private func luma(_ frame: VideoFrame, _ x: Int, _ y: Int) -> Int {
        frame.withPlane(0) { Int($0[y * frame.stride(ofPlane: 0) + x]) }
    }

    private func run(_ filter: BeautyFilter, _ frame: inout VideoFrame) throws -> Bool {
        try filter.create(format: VideoFormat(width: frame.width, height: frame.height, pixelFormat: frame.pixelFormat, frameRate: 25))
        return try filter.process(&frame)
    }

    /// Deterministic noise in −6...6.
    private struct Noise {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        mutating func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 59) % 13 - 6
        }
    }

    private func variance(_ values: [Int]) -> Double {
        let mean = Double(values.reduce(0, +)) / Double(values.count)
        return values.reduce(0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(values.count)
    }

    func testSmoothsNoiseAndKeepsTheEdge() throws {
        // Left half around 70, right half around 170, both noisy; a sharp vertical edge at x = 160.
        let width = 320, height = 240, edge = 160
        var noise = Noise()
        var table = [Int](repeating: 0, count: width * height)
        for i in table.indices { table[i] = (i % width < edge ? 70 : 170) + noise.next() }
        var frame = try makeFrame(width, height) { plane, x, y in plane == 0 ? table[y * width + x] : 128 }
        let region = { (f: VideoFrame) in (40..<200).flatMap { y in (30..<130).map { x in self.luma(f, x, y) } } }
        let before = variance(region(frame))

        // What the tone curve alone does to 70 and 170: a flat frame is left alone by smoothing.
        var flat = try makeFrame(width, height) { plane, x, _ in plane == 0 ? (x < edge ? 70 : 170) : 128 }
        XCTAssertTrue(try run(BeautyFilter(strength: 0.6), &flat))
        let (dark, bright) = (luma(flat, 20, 20), luma(flat, 300, 20))
        XCTAssertGreaterThan(dark, 70)
        XCTAssertGreaterThan(bright, 170)

        XCTAssertTrue(try run(BeautyFilter(strength: 0.6), &frame))
        let after = variance(region(frame))
        XCTAssertLessThan(after, before / 5, "noise variance \(before) → \(after)")

        // The columns on either side of the edge keep their levels: no smearing across it.
        let column = { (x: Int) in Double((20..<220).map { self.luma(frame, x, $0) }.reduce(0, +)) / 200 }
        XCTAssertEqual(column(edge - 1), Double(dark), accuracy: 3)
        XCTAssertEqual(column(edge), Double(bright), accuracy: 3)
        XCTAssertEqual(column(edge) - column(edge - 1), Double(bright - dark), accuracy: 3)
        // Flat picture itself: also sharp in the noise-free case.
        XCTAssertEqual(luma(flat, edge - 1, 100), dark)
        XCTAssertEqual(luma(flat, edge, 100), bright)
    }

    func testWhiteningRaisesMeanLumaMonotonically() throws {
        let source = try makeFrame(256, 64) { plane, x, _ in plane == 0 ? 16 + x * 219 / 255 : 128 }
        let mean = { (f: VideoFrame) in Double(self.pixels(f, 0).reduce(0) { $0 + Int($1) }) / Double(256 * 64) }
        var last = mean(source)
        for strength in [0.1, 0.3, 0.5, 0.7, 0.9, 1.0] {
            var frame = source
            XCTAssertTrue(try run(BeautyFilter(strength: strength), &frame))
            let value = mean(frame)
            XCTAssertGreaterThan(value, last + 1, "strength \(strength)")
            last = value
            // Black and white stay where they are; nothing goes above limited-range white.
            XCTAssertEqual(luma(frame, 0, 10), 16)
            XCTAssertLessThanOrEqual(pixels(frame, 0).max()!, 235)
        }
    }

    func testToneCurveFollowsTheLogFormulaWithinALevel() throws {
        // A flat picture is left alone by the smoothing, so its output is the tone curve itself,
        // which the filter evaluates as a fixed-point polynomial fit of the formula.
        for strength in [0.05, 0.3, 0.6, 1.0] {
            let beta = 1 + 1.5 * strength
            var previous = -1
            for y in 0...255 {
                var frame = try makeFrame(8, 8) { plane, _, _ in plane == 0 ? y : 128 }
                XCTAssertTrue(try run(BeautyFilter(strength: strength), &frame))
                let out = luma(frame, 3, 5)
                XCTAssertTrue(pixels(frame, 0).allSatisfy { Int($0) == out }, "strength \(strength), Y \(y): not flat")
                var exact = y
                if y > 16, y < 235 {
                    let lifted = log(1 + (beta - 1) * Double(y - 16) / 219) / log(beta)
                    exact = Int(min(235, max(Double(y), (16 + 219 * lifted).rounded())))
                }
                XCTAssertEqual(out, exact, accuracy: 1, "strength \(strength), Y \(y)")
                if y <= 16 || y >= 235 { XCTAssertEqual(out, y, "strength \(strength): Y \(y) kept") }
                XCTAssertGreaterThanOrEqual(out, previous, "strength \(strength): monotonic at Y \(y)")
                previous = out
            }
        }
    }

    func testEdgesOffTheHalfResolutionGridStaySharp() throws {
        // The blur runs on 2×2 block means: edges at odd x and odd y cut through blocks.
        let width = 320, height = 240, edgeX = 161, edgeY = 121
        // Quadrants of 60 and 170 like a chessboard: every edge is a step of 110.
        let level = { (x: Int, y: Int) in (x < edgeX) == (y < edgeY) ? 60 : 170 }
        var frame = try makeFrame(width, height) { plane, x, y in plane == 0 ? level(x, y) : 128 }
        XCTAssertTrue(try run(BeautyFilter(strength: 0.6), &frame))
        var reference = [Int: Int]()
        for value in [60, 170] {
            var flat = try makeFrame(16, 16) { plane, _, _ in plane == 0 ? value : 128 }
            XCTAssertTrue(try run(BeautyFilter(strength: 0.6), &flat))
            reference[value] = luma(flat, 8, 8)
        }
        for y in [20, 60, edgeY - 1, edgeY, 180] {
            for x in [edgeX - 1, edgeX] {
                XCTAssertEqual(luma(frame, x, y), reference[level(x, y)]!, accuracy: 3, "(\(x), \(y))")
            }
        }
        for x in [30, edgeX - 1, edgeX, 290] {
            for y in [edgeY - 1, edgeY] {
                XCTAssertEqual(luma(frame, x, y), reference[level(x, y)]!, accuracy: 3, "(\(x), \(y))")
            }
        }
    }

    func testStrengthZeroPassesThrough() throws {
        var noise = Noise()
        let source = try makeFrame(64, 48) { _, _, _ in 100 + noise.next() }
        var frame = source
        let filter = BeautyFilter(strength: 0)
        XCTAssertFalse(try run(filter, &frame))
        for plane in 0..<3 { XCTAssertEqual(pixels(frame, plane), pixels(source, plane)) }
        // Turned on and off again while running.
        filter.strength = 0.8
        XCTAssertTrue(try filter.process(&frame))
        XCTAssertNotEqual(pixels(frame, 0), pixels(source, 0))
        filter.strength = 0
        let snapshot = pixels(frame, 0)
        XCTAssertFalse(try filter.process(&frame))
        XCTAssertEqual(pixels(frame, 0), snapshot)
    }

    func testStrengthIsClamped() {
        let filter = BeautyFilter(strength: 3)
        XCTAssertEqual(filter.strength, 1)
        filter.strength = -2
        XCTAssertEqual(filter.strength, 0)
        filter.strength = .nan
        XCTAssertEqual(filter.strength, 0)
        filter.strength = 0.25
        XCTAssertEqual(filter.strength, 0.25)
    }

    func testChromaUntouchedInI420AndNV12() throws {
        for format in [VideoFrame.PixelFormat.i420, .nv12] {
            var noise = Noise()
            let source = try makeFrame(96, 64, format) { plane, x, y in plane == 0 ? 90 + noise.next() : (x * 7 + y * 3 + plane * 50) % 256 }
            var frame = source
            XCTAssertTrue(try run(BeautyFilter(strength: 1), &frame))
            XCTAssertNotEqual(pixels(frame, 0), pixels(source, 0), "\(format)")
            for plane in 1..<format.planeCount {
                XCTAssertEqual(pixels(frame, plane), pixels(source, plane), "\(format) plane \(plane)")
            }
        }
    }

    func testSharedFrameIsNotModified() throws {
        var noise = Noise()
        let original = try makeFrame(64, 64) { plane, _, _ in plane == 0 ? 120 + noise.next() : 128 }
        let before = pixels(original, 0)
        var copy = original
        XCTAssertTrue(try run(BeautyFilter(strength: 0.7), &copy))
        XCTAssertEqual(pixels(original, 0), before, "the other holder still sees the old pixels")
        XCTAssertNotEqual(pixels(copy, 0), before)
    }

    func testFollowsSizeChangesAndTinyFrames() throws {
        let filter = BeautyFilter(strength: 0.5)
        try filter.create(format: VideoFormat(width: 64, height: 64, pixelFormat: .i420, frameRate: 25))
        // Not the size it was created for, odd-sized SIMD tail, and the smallest frame.
        for (w, h) in [(130, 38), (2, 2), (64, 64), (1282, 722)] {
            var noise = Noise()
            var frame = try makeFrame(w, h) { plane, _, _ in plane == 0 ? 100 + noise.next() : 128 }
            XCTAssertTrue(try filter.process(&frame))
            XCTAssertEqual(frame.width, w)
            let values = pixels(frame, 0)
            XCTAssertEqual(values.count, w * h)
            // Noise of ±6 around 100, smoothed and lifted a little: stays in a narrow band.
            XCTAssertTrue(values.allSatisfy { $0 >= 100 && $0 <= 135 }, "\(w)x\(h): \(values.min()!)...\(values.max()!)")
        }
        filter.destroy()
    }
}
