import Foundation
@testable import LivePushLoopback
import XCTest

/// A finished recording's final name is claimed without replacing anything (`RecordingClaim`),
/// on real files in a temporary directory.
final class RecordingClaimTests: XCTestCase {
    private var directory: String!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("claim-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func write(_ name: String, _ text: String) -> String {
        let path = directory + "/" + name
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)), path)
        return path
    }

    private func read(_ name: String) -> String? {
        FileManager.default.contents(atPath: directory + "/" + name).map { String(decoding: $0, as: UTF8.self) }
    }

    func testCandidatesStartAtTheNameForTheNewestAndAtTheIDForAnOlderOne() {
        let newest = RecordingClaim.candidates(for: "/r/vic.flv", publishID: 7, isNewest: true)
        XCTAssertEqual(Array(newest.prefix(3)), ["/r/vic.flv", "/r/vic-7.flv", "/r/vic-7-2.flv"])
        let older = RecordingClaim.candidates(for: "/r/vic.flv", publishID: 7, isNewest: false)
        XCTAssertEqual(Array(older.prefix(2)), ["/r/vic-7.flv", "/r/vic-7-2.flv"])
        XCTAssertEqual(older.count, RecordingClaim.maxAttempts)
    }

    func testATakenNameIsPassedOverAndNeverReplaced() {
        _ = write("vic.flv", "first")
        _ = write("vic-9.flv", "someone else's")
        let part = write("vic.flv.part-9", "second")
        let outcome = RecordingClaim.claim(part, candidates: RecordingClaim.candidates(for: directory + "/vic.flv", publishID: 9, isNewest: true))
        XCTAssertEqual(outcome, .claimed(directory + "/vic-9-2.flv"))
        XCTAssertEqual(read("vic.flv"), "first")
        XCTAssertEqual(read("vic-9.flv"), "someone else's")
        XCTAssertEqual(read("vic-9-2.flv"), "second")
        XCTAssertNil(read("vic.flv.part-9"), "the part file is gone")
    }

    func testEveryNameTakenLeavesThePartFileAsItIs() {
        _ = write("a.flv", "x")
        let part = write("a.flv.part-1", "mine")
        XCTAssertEqual(RecordingClaim.claim(part, candidates: [directory + "/a.flv"]), .failed(errno: EEXIST))
        XCTAssertEqual(read("a.flv"), "x")
        XCTAssertEqual(read("a.flv.part-1"), "mine")
    }

    func testTheLinkFallbackRefusesAnExistingNameToo() {
        // The fallback's own step, as a file system without RENAME_NOREPLACE would take it.
        _ = write("b.flv", "kept")
        let part = write("b.flv.part-2", "new")
        XCTAssertNotEqual(link(part, directory + "/b.flv"), 0)
        XCTAssertEqual(errno, EEXIST)
        XCTAssertEqual(read("b.flv"), "kept")
    }
}
