import Foundation
@testable import LivePush
import XCTest

final class FilterImageLoaderTests: XCTestCase {
    private var files: MediaTestFiles!

    override func setUpWithError() throws {
        try XCTSkipUnless(MediaTestFiles.toolsAvailable, "ffmpeg/ffprobe not installed")
        files = try MediaTestFiles()
    }

    override func tearDown() {
        files = nil
    }

    private func pixel(_ image: RGBAImage, _ x: Int, _ y: Int) -> [UInt8] {
        let i = (y * image.width + x) * 4
        return Array(image.pixels[i..<i + 4])
    }

    private func assertImageOpenFailed(_ path: String, _ mention: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try ImageLoader.loadRGBA(path: path)
            XCTFail("\(path) loaded", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, .imageOpenFailed, file: file, line: line)
            XCTAssertTrue(error.detail?.contains(path) ?? false, "detail names the path: \(error)", file: file, line: line)
            if let mention { XCTAssertTrue(error.detail?.contains(mention) ?? false, "\(error)", file: file, line: line) }
        }
    }

    func testPNGWithAlphaKeepsStraightColourAndAlpha() throws {
        // Pure red everywhere; alpha 255 in the left half, a ramp 0...120 in the right half.
        let path = try files.make("alpha.png", [
            "-f", "lavfi", "-i", "color=red:s=32x16", "-frames:v", "1",
            "-vf", "format=rgba,geq=r=255:g=0:b=0:a='if(lt(X,16),255,(X-16)*8)'",
        ])
        let image = try ImageLoader.loadRGBA(path: path)
        XCTAssertEqual(image.width, 32)
        XCTAssertEqual(image.height, 16)
        XCTAssertEqual(image.pixels.count, 32 * 16 * 4)
        XCTAssertEqual(pixel(image, 0, 0), [255, 0, 0, 255])
        XCTAssertEqual(pixel(image, 15, 15), [255, 0, 0, 255])
        XCTAssertEqual(pixel(image, 16, 3), [255, 0, 0, 0], "not premultiplied: colour kept where alpha is 0")
        XCTAssertEqual(pixel(image, 20, 7), [255, 0, 0, 32])
        XCTAssertEqual(pixel(image, 31, 15), [255, 0, 0, 120])
        XCTAssertTrue(image.hasTransparency)
    }

    func testJPEGAndBMPDecodeOpaque() throws {
        let jpeg = try files.make("blue.jpg", ["-f", "lavfi", "-i", "color=0x2040C0:s=48x24", "-frames:v", "1", "-q:v", "2"])
        let image = try ImageLoader.loadRGBA(path: jpeg)
        XCTAssertEqual(image.width, 48)
        XCTAssertEqual(image.height, 24)
        let p = pixel(image, 24, 12)
        XCTAssertEqual(Int(p[0]), 0x20, accuracy: 6)
        XCTAssertEqual(Int(p[1]), 0x40, accuracy: 6)
        XCTAssertEqual(Int(p[2]), 0xC0, accuracy: 6)
        XCTAssertFalse(image.hasTransparency)

        let bmp = try files.make("green.bmp", ["-f", "lavfi", "-i", "color=0x00FF00:s=10x6", "-frames:v", "1"])
        let green = try ImageLoader.loadRGBA(path: bmp)
        XCTAssertEqual(green.width, 10)
        XCTAssertEqual(green.height, 6)
        // ffmpeg's colour source is YUV, so the BMP's green is 254 or 255.
        XCTAssertEqual(pixel(green, 9, 5).map { Int($0) / 4 }, [0, 63, 0, 63])
    }

    func testBadFilesThrowImageOpenFailed() throws {
        assertImageOpenFailed(files.path("missing.png"), "no such")
        assertImageOpenFailed(files.directory.path)
        XCTAssertThrowsError(try ImageLoader.loadRGBA(path: "")) { XCTAssertEqual(($0 as? LivePushError)?.code, .imageOpenFailed) }

        let text = files.path("notes.txt")
        try "just some text, not a picture\n".write(toFile: text, atomically: true, encoding: .utf8)
        assertImageOpenFailed(text)
        let fakePNG = files.path("fake.png")
        try "this is not a PNG either\n".write(toFile: fakePNG, atomically: true, encoding: .utf8)
        assertImageOpenFailed(fakePNG)
        let empty = files.path("empty.png")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        assertImageOpenFailed(empty)
        // A PNG cut short after its header.
        let good = try files.make("cut-src.png", ["-f", "lavfi", "-i", "color=red:s=32x16", "-frames:v", "1"])
        let truncated = files.path("cut.png")
        _ = FileManager.default.createFile(atPath: truncated, contents: try Data(contentsOf: URL(fileURLWithPath: good)).prefix(40))
        assertImageOpenFailed(truncated)

        XCTAssertThrowsError(try ImageLoader.loadFrame(path: files.path("missing.png"), width: 64, height: 64)) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .imageOpenFailed)
        }
    }

    func testLoadFrameLetterboxesIntoI420() throws {
        // 2:1 red picture into a square frame: full width, 32 rows high, centred; black bars.
        let path = try files.make("red.png", ["-f", "lavfi", "-i", "color=red:s=32x16", "-frames:v", "1"])
        let frame = try ImageLoader.loadFrame(path: path, width: 64, height: 64)
        XCTAssertEqual(frame.width, 64)
        XCTAssertEqual(frame.height, 64)
        XCTAssertEqual(frame.pixelFormat, .i420)
        let y = frame.withPlane(0) { p in (0..<64).map { row in Int(p[row * frame.stride(ofPlane: 0) + 32]) } }
        let u = frame.withPlane(1) { p in Int(p[16 * frame.stride(ofPlane: 1) + 16]) }
        let v = frame.withPlane(2) { p in Int(p[16 * frame.stride(ofPlane: 2) + 16]) }
        // BT.601 limited range red: Y 81, U 90, V 240.
        XCTAssertEqual(y[32], 81, accuracy: 3)
        XCTAssertEqual(u, 90, accuracy: 3)
        XCTAssertEqual(v, 240, accuracy: 3)
        XCTAssertEqual(y[0], 16, "black bar above")
        XCTAssertEqual(y[63], 16, "black bar below")
        XCTAssertEqual(y[20], 81, accuracy: 3)
        XCTAssertEqual(y[12], 16)

        XCTAssertThrowsError(try ImageLoader.loadFrame(path: path, width: 63, height: 64)) {
            XCTAssertEqual(($0 as? LivePushError)?.code, .imageOpenFailed)
        }
    }
}
