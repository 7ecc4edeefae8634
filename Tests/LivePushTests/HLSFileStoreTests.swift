import Foundation
@testable import LivePush
import XCTest

/// A file:// HLS output's directory: puts replace files whole (a temporary file renamed over the
/// target), removals, and what a directory that cannot be written says.
final class HLSFileStoreTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hls-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func testAPutReplacesTheFileWholeAndLeavesNothingElse() throws {
        let store = HLSFileStore(directory: dir.path)
        try store.check()
        try store.perform(.put(name: "index.m3u8", bytes: Array("#EXTM3U\nfirst\n".utf8)))
        try store.perform(.put(name: "index.m3u8", bytes: Array("#EXTM3U\n".utf8)))
        try store.perform(.put(name: "index0.ts", bytes: [UInt8](repeating: 0x47, count: 188 * 100)))
        XCTAssertEqual(try String(contentsOf: dir.appendingPathComponent("index.m3u8"), encoding: .utf8), "#EXTM3U\n")
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("index0.ts")).count, 18_800)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["index.m3u8", "index0.ts"])
        try store.perform(.delete(name: "index0.ts"))
        try store.perform(.delete(name: "index0.ts"))  // gone already: not an error
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["index.m3u8"])
    }

    func testADirectoryThatCannotBeWrittenFailsWithItsCode() throws {
        XCTAssertThrowsError(try HLSFileStore(directory: dir.appendingPathComponent("missing").path).check()) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .hlsWriteFailed)
            XCTAssertTrue("\(error)".contains("No such file or directory"), "\(error)")
        }
        let file = dir.appendingPathComponent("plain")
        try Data([1]).write(to: file)
        XCTAssertThrowsError(try HLSFileStore(directory: file.path).check()) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .hlsWriteFailed)
        }
        XCTAssertThrowsError(try HLSFileStore(directory: dir.appendingPathComponent("missing").path)
            .perform(.put(name: "index.m3u8", bytes: [1]))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .hlsWriteFailed)
        }
        XCTAssertEqual(LivePushError.Code.hlsWriteFailed.rawValue, 805_503_746)
    }
}
