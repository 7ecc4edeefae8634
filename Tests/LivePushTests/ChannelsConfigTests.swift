import Foundation
@testable import LivePush
import XCTest

/// The channels configuration as data: what is accepted, what is refused (naming the channel
/// and the field), and how outputs are shown.
final class ChannelsConfigTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("channels-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data("not really media".utf8).write(to: dir.appendingPathComponent("show.mp4"))
        try Data(#"{"content": [{"id": "a", "source": "show.mp4", "in": 0, "out": 1}]}"#.utf8).write(to: dir.appendingPathComponent("s.json"))
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: dir)
    }

    private func parse(_ json: String) throws(LivePushError) -> ChannelsConfig {
        try ChannelsConfig(json: Data(json.utf8), relativeTo: dir.path)
    }

    func testTheIssuesExampleIsReadWithPathsRelativeToTheConfiguration() throws {
        let config = try parse("""
        {"control": "127.0.0.1:8089",
         "channels": [{"id": "c0", "input": "show.mp4", "loop": "forever", "outputs": ["rtmp://host/app/s0"]},
                      {"id": "c1", "playout": "s.json", "outputs": ["rtmp://host/app/s1", "rtmp://backup/app/s1"]}]}
        """)
        XCTAssertEqual(config.control, "127.0.0.1:8089")
        XCTAssertEqual(config.channels.map(\.id), ["c0", "c1"])
        XCTAssertEqual(config.channels[0].source, .file(path: dir.appendingPathComponent("show.mp4").path, loop: .forever))
        XCTAssertEqual(config.channels[1].source, .playout(schedulePath: dir.appendingPathComponent("s.json").path))
        XCTAssertEqual(config.channels[1].outputs.count, 2)
        XCTAssertTrue(config.channels.allSatisfy(\.autostart))
    }

    func testALiveInputTakesItsBackupFillAndTimeout() throws {
        let config = try parse("""
        {"channels": [{"id": "live", "input": "rtmp://ingest/live/feed", "backup": "show.mp4", "inputLoss": "black",
                       "inputTimeout": 1.5, "outputs": ["rtmp://host/app/s0"]}]}
        """)
        let channel = try XCTUnwrap(config.channels.first)
        XCTAssertEqual(channel.source, .live(url: "rtmp://ingest/live/feed"))
        XCTAssertEqual(channel.liveInput.backup, dir.appendingPathComponent("show.mp4").path)
        XCTAssertEqual(channel.liveInput.loss, .black)
        XCTAssertEqual(channel.liveInput.timeout, .milliseconds(1500))
    }

    func testAnOutputMayBeAnObjectWithARenditionOfItsOwn() throws {
        let config = try parse("""
        {"channels": [{"id": "c0", "input": "show.mp4",
                       "outputs": ["rtmp://host/app/full", {"url": "rtmp://host/app/small", "video": {"size": "640x360", "bitrate": 800}},
                                   {"url": "rtmp://host/app/plain"}]}]}
        """)
        XCTAssertEqual(config.channels[0].outputs, ["rtmp://host/app/full", "rtmp://host/app/small", "rtmp://host/app/plain"])
        XCTAssertEqual(config.channels[0].outputVideo, [1: VideoRendition(width: 640, height: 360, bitrateKbps: 800)])
        let refused: [(String, String)] = [
            (#"{"url": "rtmp://h/a/s", "video": {"size": "640x360"}}"#, #"field "outputs[0].video""#),
            (#"{"url": "rtmp://h/a/s", "video": {"size": "640x360", "bitrate": 10}}"#, #"field "outputs[0].video""#),
            (#"{"url": "rtmp://h/a/s", "video": {"size": "big", "bitrate": 800}}"#, #"field "outputs[0].video""#),
            (#"{"url": "rtmp://h/a/s", "audio": {}}"#, #"field "outputs[0].audio""#),
            (#"{"video": {"size": "640x360", "bitrate": 800}}"#, #"field "outputs[0].url""#),
            (#"{"url": "http://h/a/s"}"#, #"field "outputs[0]""#),
        ]
        assertRefused(outputs: refused)
    }

    /// An output object's `"video"` may be a list: a ladder. An HLS upload and an RTMP output
    /// (E-RTMP v2 multitrack) carry it; an SRT output carries one video, so a ladder of more than one is refused with a sentence
    /// naming what can; a `file://` HLS output is no channel's (the API must not choose where
    /// the process writes).
    func testAnOutputObjectCarriesALadder() throws {
        let config = try parse("""
        {"channels": [{"id": "c0", "input": "show.mp4",
                       "outputs": [{"url": "rtmp://host/app/one", "video": [{"size": "640x360", "bitrate": 800}]},
                                   {"url": "https://origin/c0/index.m3u8",
                                    "video": [{"size": "1280x720", "bitrate": 2500}, {"size": "640x360", "bitrate": 800}]}]}]}
        """)
        XCTAssertEqual(config.channels[0].outputVideoLadders, [0: [VideoRendition(width: 640, height: 360, bitrateKbps: 800)],
                                                               1: [VideoRendition(width: 1280, height: 720, bitrateKbps: 2500),
                                                                   VideoRendition(width: 640, height: 360, bitrateKbps: 800)]])
        XCTAssertEqual(config.channels[0].outputVideo[0], VideoRendition(width: 640, height: 360, bitrateKbps: 800))
        let refused: [(String, String)] = [
            (#"{"url": "file:///srv/hls/index.m3u8", "video": [{"size": "640x360", "bitrate": 800}]}"#, "HLS upload"),
            ("\"file:///srv/hls/index.m3u8\"", "HLS upload"),
            (#"{"url": "srt://h:9000", "video": [{"size": "1280x720", "bitrate": 2500}, {"size": "640x360", "bitrate": 800}]}"#,
             "an HLS output"),
            (#"{"url": "rtmp://h/a/s", "video": []}"#, "empty ladder"),
            (#"{"url": "rtmp://h/a/s", "video": [{"size": "640x360", "bitrate": 800}, {"size": "640x360", "bitrate": 800}]}"#,
             #"field "outputs[0].video[1]""#),
            (#"{"url": "rtmp://h/a/s", "video": [{"size": "640x360", "bitrate": 800}, "x"]}"#, #"field "outputs[0].video[1]""#),
        ]
        assertRefused(outputs: refused)
    }

    func testOutputVideoIsParsedAsTheCLIWritesIt() throws {
        let (id, rendition) = try VideoRendition.parseAssignment("1=320x180@300")
        XCTAssertEqual(id, 1)
        XCTAssertEqual(rendition, VideoRendition(width: 320, height: 180, bitrateKbps: 300))
        XCTAssertEqual(rendition.description, "320x180@300")
        for bad in ["320x180@300", "-1=320x180@300", "1=320x180", "1=320x180@", "1=8x8@300", "1=320x180@1000000", "1=320x180@3e2"] {
            XCTAssertThrowsError(try VideoRendition.parseAssignment(bad), bad) { error in
                XCTAssertEqual((error as? LivePushError)?.code, .outputSettingsInvalid, bad)
            }
        }
    }

    func testRefusalsNameTheChannelAndTheField() {
        let cases: [(String, String)] = [
            (#"{"channels": [{"id": "a b", "input": "show.mp4", "outputs": ["rtmp://h/a/s"]}]}"#, #"field "id""#),
            (#"{"channels": [{"id": "x", "input": "show.mp4", "playout": "s.json", "outputs": ["rtmp://h/a/s"]}]}"#, #"channel "x", field "playout""#),
            (#"{"channels": [{"id": "x", "playout": "s.json", "loop": 2, "outputs": ["rtmp://h/a/s"]}]}"#, #"channel "x", field "loop""#),
            (#"{"channels": [{"id": "x", "input": "show.mp4"}]}"#, #"channel "x", field "outputs""#),
            (#"{"channels": [{"id": "x", "input": "show.mp4", "outputs": [3]}]}"#, #"channel "x", field "outputs[0]""#),
            (#"{"channels": [{"id": "x", "input": "show.mp4", "outputs": ["rtmp://h/a/s"], "autostart": "yes"}]}"#, #"field "autostart""#),
            (#"{"channels": [{"id": "x", "input": "show.mp4", "outputs": ["rtmp://h/a/s"]}], "extra": 1}"#, #"field "extra""#),
            (#"{"token": "", "channels": []}"#, #"field "token""#),
            (#"{"channels": [{"id": "x", "input": "show.mp4", "backup": "show.mp4", "outputs": ["rtmp://h/a/s"]}]}"#, #"channel "x", field "backup""#),
            (#"{"channels": [{"id": "x", "input": "srt://h:9000", "loop": 2, "outputs": ["rtmp://h/a/s"]}]}"#, #"channel "x", field "loop""#),
            (#"{"channels": [{"id": "x", "input": "srt://h:9000", "inputLoss": "freeze", "outputs": ["rtmp://h/a/s"]}]}"#, #"field "inputLoss""#),
            (#"{"channels": [{"id": "x", "input": "srt://h:9000", "inputTimeout": 0, "outputs": ["rtmp://h/a/s"]}]}"#, #"field "inputTimeout""#),
            (#"{"channels": [{"id": "x", "input": "srt://h:9000", "backup": "gone.mp4", "outputs": ["rtmp://h/a/s"]}]}"#, #"field "backup""#),
        ]
        for (json, expected) in cases {
            XCTAssertThrowsError(try parse(json), json) { error in
                let error = error as? LivePushError
                XCTAssertEqual(error?.code, .channelConfigInvalid, json)
                XCTAssertTrue(error?.message.contains(expected) ?? false, "\(expected): \(error?.message ?? "")")
            }
        }
    }

    func testOutputsAreShownWithoutTheirStreamKeyOrSecrets() {
        XCTAssertEqual(Redaction.redactStreamKey("rtmp://a.rtmp.youtube.com/live2/abcd-efgh-ijkl-mnop"), "rtmp://a.rtmp.youtube.com/live2/abcd****")
        XCTAssertEqual(Redaction.redactStreamKey("rtmp://host:1935/app/stream?auth_key=1700000000-0-0-deadbeef"),
                       "rtmp://host:1935/app/stre****?auth_key=1700****")
        XCTAssertEqual(Redaction.redactStreamKey("rtmp://user:pw@host/app/s1"), "rtmp://****@host/app/****")
        XCTAssertEqual(ChannelsConfig.hostAndPort("127.0.0.1:0")?.port, 0)
        XCTAssertNil(ChannelsConfig.hostAndPort("127.0.0.1:99999"))
    }

    /// Each output (JSON) in a channel is refused as `channelConfigInvalid`, its message naming `expected`.
    private func assertRefused(outputs: [(String, String)], file: StaticString = #filePath, line: UInt = #line) {
        for (output, expected) in outputs {
            let json = #"{"channels": [{"id": "x", "input": "show.mp4", "outputs": [\#(output)]}]}"#
            XCTAssertThrowsError(try parse(json), json, file: file, line: line) { error in
                let error = error as? LivePushError
                XCTAssertEqual(error?.code, .channelConfigInvalid, json, file: file, line: line)
                XCTAssertTrue(error?.message.contains(expected) ?? false, "\(expected): \(error?.message ?? "")", file: file, line: line)
            }
        }
    }
}
