import Foundation
import LivePush
import XCTest

/// Bad input and unreachable servers: each must end with its documented code, quickly, and
/// without a crash or a hang.
final class PushFailureTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        scratch = try TestMedia.makeTemporaryDirectory(prefix: "push-failure")
    }

    override func tearDown() {
        if let scratch { TestMedia.removeTemporaryDirectory(scratch) }
    }

    private func assertStartThrows(_ code: LivePushError.Code, file path: String, url: String = "rtmp://127.0.0.1:1/live/s",
                                   line: UInt = #line) {
        let pusher = LivePusher(config: PushHelpers.fastConfig())
        XCTAssertThrowsError(try pusher.start(file: path, url: url), line: line) { error in
            XCTAssertEqual((error as? LivePushError)?.code, code, "\(error)", line: line)
        }
        XCTAssertEqual(pusher.state, .idle, "a failed start leaves the pusher idle", line: line)
    }

    func testMissingFile() {
        assertStartThrows(.fileNotFound, file: scratch.appendingPathComponent("nope.mp4").path)
    }

    func testTextFileIsNotMedia() throws {
        let path = scratch.appendingPathComponent("notes.mp4").path
        try "this is not a video, just text\n".write(toFile: path, atomically: true, encoding: .utf8)
        assertStartThrows(.notMedia, file: path)
    }

    func testFileWithoutAudioOrVideo() throws {
        let srt = scratch.appendingPathComponent("subs.srt").path
        try "1\n00:00:00,000 --> 00:00:01,000\nhello\n\n".write(toFile: srt, atomically: true, encoding: .utf8)
        let mkv = scratch.appendingPathComponent("subs.mkv").path
        let result = try ProcessRunner.run("ffmpeg", ["-v", "error", "-y", "-i", srt, mkv], timeout: 30)
        XCTAssertTrue(result.succeeded, result.summary)
        assertStartThrows(.noUsableStream, file: mkv)
    }

    func testIllegalURLs() {
        for url in ["rtmp://bad host/app/stream", "rtmp://127.0.0.1/app", "rtmp://127.0.0.1/", "ftp://127.0.0.1/live/s", "srt://127.0.0.1"] {
            assertStartThrows(.invalidURL, file: TestMedia.path(.h264AAC), url: url)
        }
    }

    func testIllegalStateTransitionsOnAnIdlePusher() {
        let pusher = LivePusher()
        for action in [pusher.pause, pusher.resume, pusher.stop] {
            XCTAssertThrowsError(try action()) { XCTAssertEqual(($0 as? LivePushError)?.code, .invalidState) }
        }
    }

    private func pushExpectingFailure(url: String, config: PushConfig = PushHelpers.fastConfig()) async throws -> PushRun {
        let run = try await PushHelpers.push(file: TestMedia.path(.h264AAC), url: url, config: config, timeout: .seconds(15))
        XCTAssertEqual(run.eventNames.first, "connectFailed")
        XCTAssertEqual(run.eventNames.last, "stopped")
        XCTAssertTrue(run.eventNames.contains("sdkError"))
        return run
    }

    func testClosedPortIsRefused() async throws {
        let port = try NginxRTMPServer.freeLoopbackPort()
        let run = try await pushExpectingFailure(url: "rtmp://127.0.0.1:\(port)/live/s")
        XCTAssertEqual(run.error?.code, .connectionRefused)
    }

    func testUnknownHostIsReported() async throws {
        let run = try await pushExpectingFailure(url: "rtmp://no-such-host.invalid/live/s")
        XCTAssertEqual(run.error?.code, .hostNotFound)
    }

    func testServerThatNeverAnswersTheHandshake() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        var config = PushHelpers.fastConfig()
        config.responseTimeout = .seconds(1)
        let run = try await pushExpectingFailure(url: "rtmp://127.0.0.1:\(listener.port)/live/s", config: config)
        XCTAssertEqual(run.error?.code, .handshakeFailed)
        XCTAssertLessThan(run.elapsed, .seconds(10), "the response timeout bounds the wait")
    }
}

/// A TCP port that accepts connections (in the kernel's backlog) and never says a word.
final class SilentListener: @unchecked Sendable {
    let port: UInt16
    private let fd: Int32

    init() throws {
        (fd, port) = try LoopbackSocket.listen(backlog: 8)
    }

    func close() { Glibc.close(fd) }
}
