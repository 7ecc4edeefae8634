@testable import LivePush
import XCTest

/// The overlay stage's driver: a change lands on the next picture drawn, and says so; only the
/// overlay's rectangle changes; a push without overlays leaves its pictures as they were.
final class OverlayStageTests: XCTestCase {
    private func grey(_ timestamp: Int64) throws -> VideoFrame {
        var frame = try VideoFrame(width: 320, height: 240, pixelFormat: .i420, timestamp: timestamp)
        for plane in 0..<frame.planeCount {
            try frame.withMutablePlane(plane) { $0.update(repeating: plane == 0 ? 100 : 128) }
        }
        return frame
    }

    private func luma(_ frame: VideoFrame) -> [UInt8] {
        frame.withPlane(0) { buffer in
            let stride = frame.stride(ofPlane: 0)
            return (0..<frame.height).flatMap { row in Array(buffer[(row * stride)..<(row * stride + frame.width)]) }
        }
    }

    func testTextIsRenderedOnce() throws {
        let image = try TextRasterizer.render("LIVE 42", size: 40, color: .white, background: .black)
        XCTAssertGreaterThan(image.width, 100)
        XCTAssertEqual(image.height, try TextRasterizer.render("A", size: 40, color: .white, background: .black).height,
                       "a line's height, whatever its glyphs")
        XCTAssertTrue(image.pixels.enumerated().contains { $0.offset % 4 == 0 && $0.element == 255 }, "white text pixels")
        XCTAssertFalse(image.hasTransparency, "an opaque box")
    }

    func testAChangeLandsOnTheNextPictureOnlyInItsRectangle() async throws {
        let stage = OverlayStage()
        var frame = try grey(0)
        let untouched = luma(frame)
        stage.draw(on: &frame, frameRate: 25)
        XCTAssertEqual(luma(frame), untouched, "no overlay: the picture as it was")

        let receipt = try stage.submit(.add(Overlay(id: "t", content: .text("LIVE 42"), x: 40, y: 40, size: 32, background: .black)))
        XCTAssertNil(receipt.applied, "not drawn before a picture comes")
        var next = try grey(40_000)
        stage.draw(on: &next, frameRate: 25)
        let applied = await receipt.wait(upTo: .seconds(1))
        XCTAssertEqual(applied, OverlayApplied(id: "t", mediaTime: .microseconds(40_000), frame: 1, after: .microseconds(0)))
        let drawn = luma(next)
        XCTAssertNotEqual(drawn, untouched)
        let rendered = try TextRasterizer.render("LIVE 42", size: 32, color: .white, background: .black)
        for (index, value) in drawn.enumerated() {
            let (x, y) = (index % 320, index / 320)
            let inside = (40..<(40 + rendered.width)).contains(x) && (40..<(40 + rendered.height)).contains(y)
            if !inside { XCTAssertEqual(value, 100, "(\(x), \(y)) is outside the overlay"); if value != 100 { break } }
        }
        XCTAssertEqual(drawn[42 * 320 + 42], 16, "the black box")

        let removal = try stage.submit(.remove(id: "t"))
        var after = try grey(80_000)
        stage.draw(on: &after, frameRate: 25)
        let gone = await removal.wait(upTo: .seconds(1))
        XCTAssertEqual(gone?.frame, 2)
        XCTAssertEqual(luma(after), untouched)
        XCTAssertEqual(stage.requested, [])
    }

    func testAReceiptWithoutPicturesTimesOut() async throws {
        let stage = OverlayStage()
        let receipt = try stage.submit(.add(Overlay(id: "c", content: .clock(.media), x: 0, y: 0)))
        let applied = await receipt.wait(upTo: .milliseconds(50))
        XCTAssertNil(applied)
        XCTAssertEqual(stage.requested.map(\.id), ["c"], "the change is kept for the next picture")
    }

    func testAClockShowsThePicturesTime() throws {
        let stage = OverlayStage()
        _ = try stage.submit(.add(Overlay(id: "c", content: .clock(.media), x: 0, y: 0, size: 24)))
        var one = try grey(1_000_000), same = try grey(1_960_000), two = try grey(2_000_000)
        stage.draw(on: &one, frameRate: 25)
        stage.draw(on: &same, frameRate: 25)
        stage.draw(on: &two, frameRate: 25)
        XCTAssertEqual(luma(one), luma(same), "00:00:01 both times")
        XCTAssertNotEqual(luma(one), luma(two), "00:00:02 differs")
    }

    func testAnImageIsScaledToItsSize() {
        let image = RGBAImage(width: 4, height: 2, pixels: [UInt8](repeating: 255, count: 32))
        let scaled = OverlayStage.scale(image, toHeight: 8)
        XCTAssertEqual(scaled.width, 16)
        XCTAssertEqual(scaled.height, 8)
    }
}

extension OverlayStageTests {
    func testATextWiderThanAnyPictureIsRefused() {
        let long = Overlay(id: "w", content: .text(String(repeating: "W", count: 256)), x: 0, y: 0, size: 256)
        XCTAssertThrowsError(try OverlayStage().submit(.add(long))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .overlayInvalid)
            XCTAssertTrue("\(error)".contains("wider than"), "\(error)")
        }
    }
}
