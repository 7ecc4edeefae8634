import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A file input opens only as a file: a playlist or list that names other inputs (an HLS
/// playlist ffmpeg wrote, one pointing at a URL, a concat list) is refused before anything it
/// names is opened, while the media files themselves push as before.
final class InputWhitelistTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = try TestMedia.makeTemporaryDirectory(prefix: "livepush-whitelist")
    }

    override func tearDown() {
        TestMedia.removeTemporaryDirectory(dir)
    }

    private func push(_ path: String) throws -> ProcessRunner.Result {
        try LivePushCLI.run(["push", path, "--fast"], timeout: 60)
    }

    func testPlaylistsAndListsThatNameOtherInputsAreRefused() throws {
        // A real HLS playlist of the sample, as ffmpeg writes it.
        let local = dir.appendingPathComponent("local.m3u8").path
        let hls = try ProcessRunner.run("ffmpeg", ["-v", "error", "-i", TestMedia.path(.h264AAC), "-c", "copy", "-f", "hls",
                                                   "-hls_time", "1", "-hls_list_size", "0", local], timeout: 60)
        XCTAssertTrue(hls.succeeded, hls.stderrString)
        // The same playlist, its segments at a URL that a listener here would see asked for.
        let (listener, port) = try LoopbackSocket.listen(backlog: 8)
        defer { close(listener) }
        let remote = dir.appendingPathComponent("remote.m3u8").path
        try "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nhttp://127.0.0.1:\(port)/segment.ts\n#EXT-X-ENDLIST\n"
            .write(toFile: remote, atomically: true, encoding: .utf8)
        let concat = dir.appendingPathComponent("list.ffconcat").path
        try "ffconcat version 1.0\nfile '\(TestMedia.path(.h264AAC))'\n".write(toFile: concat, atomically: true, encoding: .utf8)

        for path in [local, remote, concat] {
            let result = try push(path)
            XCTAssertEqual(result.exitCode, 1, "\(path): \(result.summary)")
            XCTAssertTrue(result.stderrString.contains("805503234"), "notMedia for \(path): \(result.stderrString)")
        }
        var pending = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&pending, 1, 0), 0, "nothing connected to the URL the playlist named")

        // The segments themselves are media files, and push.
        let segment = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted().first { $0.hasSuffix(".ts") })
        let pushed = try push(dir.appendingPathComponent(segment).path)
        XCTAssertTrue(pushed.succeeded, pushed.summary + pushed.stderrString)
    }
}
