import Foundation
@testable import LivePush
import XCTest

/// A channel's `"loudness"`: a number or an object, checked like the CLI's options, and
/// carried into the push's media options.
final class LoudnessConfigTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("loudness-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data("not really media".utf8).write(to: dir.appendingPathComponent("show.mp4"))
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: dir)
    }

    private func channel(_ loudness: String) throws(LivePushError) -> ChannelSpec {
        let json = #"{"channels": [{"id": "c", "input": "show.mp4", "outputs": ["rtmp://host/app/s"], "loudness": \#(loudness)}]}"#
        return try ChannelsConfig(json: Data(json.utf8), relativeTo: dir.path).channels[0]
    }

    func testANumberOrAnObject() throws {
        let plain = try channel("-16")
        XCTAssertEqual(plain.loudness, try LoudnessTarget(integrated: -16, truePeak: -1))
        XCTAssertEqual(ChannelOpener.config(for: plain).media.loudness, plain.loudness, "the push normalises")
        XCTAssertEqual(try channel(#"{"target": -23, "truePeak": -2}"#).loudness, try LoudnessTarget(integrated: -23, truePeak: -2))
        let none = try ChannelsConfig(json: Data(#"{"channels": [{"id": "c", "input": "show.mp4", "outputs": ["rtmp://h/a/s"]}]}"#.utf8),
                                      relativeTo: dir.path).channels[0]
        XCTAssertNil(none.loudness)
        XCTAssertNil(ChannelOpener.config(for: none).media.loudness, "without it the sound is untouched")
    }

    func testOutOfRangeAndMalformedAreRefusedNamingTheField() {
        for (value, code, field) in [("-3", LivePushError.Code.loudnessSettingsInvalid, "loudness"),
                                     (#"{"target": -23, "truePeak": 2}"#, .loudnessSettingsInvalid, "loudness"),
                                     (#""-23""#, .channelConfigInvalid, "loudness"),
                                     (#"{"target": -23, "ceiling": -1}"#, .channelConfigInvalid, "loudness.ceiling"),
                                     (#"{"truePeak": -1}"#, .channelConfigInvalid, "loudness.target")] {
            XCTAssertThrowsError(try channel(value), value) { error in
                let error = error as? LivePushError
                XCTAssertEqual(error?.code, code, value)
                XCTAssertTrue(error?.detail?.contains(#"field "\#(field)""#) == true, "\(value): \(String(describing: error))")
            }
        }
    }
}
