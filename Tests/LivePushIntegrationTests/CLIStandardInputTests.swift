import Foundation
import XCTest

/// `livepush push - URL`: whatever ffmpeg (or any other program) writes to a pipe.
final class CLIStandardInputTests: NginxTestCase {
    func testRawVideoAndPCMOnAPipeArriveAsH264AndAACWithEveryFrame() async throws {
        let binary = try XCTUnwrap(LivePushCLI.binary)
        let url = server.url(stream: "pipe")
        // Decoded pictures and PCM in NUT, as a capture program would hand them over.
        let pipeline = "ffmpeg -hide_banner -loglevel error -nostdin -i '\(TestMedia.path(.h264AAC))' "
            + "-c:v rawvideo -c:a pcm_s16le -f nut - | '\(binary)' push - '\(url)' --fast --json"
        let result = try ProcessRunner.run("/bin/bash", ["-c", "set -o pipefail; " + pipeline], timeout: 60)
        XCTAssertEqual(result.exitCode, 0, result.summary)
        XCTAssertTrue(result.stdoutString.contains("\"event\":\"pushStarted\""), result.stdoutString)

        let probe = try FFProbe.run(try await server.awaitRecording(stream: "pipe"))
        probe.assertWellFormed()
        XCTAssertEqual(probe.videoStream?.codecName, "h264")
        XCTAssertEqual(probe.audioStream?.codecName, "aac")
        XCTAssertEqual(probe.videoPackets.count, 100, "every frame of the 4 s, 25 fps source")
        let audioSeconds = probe.audioPackets.count * 1024
        XCTAssertEqual(Double(audioSeconds) / Double(probe.audioStream?.sampleRate ?? 1), 4.0, accuracy: 0.1)
    }

    func testStandardInputCannotBeLoopedAndGarbageIsNotMedia() throws {
        let looped = try LivePushCLI.run(["push", "-", server.url(stream: "x"), "--loop", "2"])
        XCTAssertEqual(looped.exitCode, 64, looped.summary)
        XCTAssertTrue(looped.stderrString.contains("standard input"), looped.stderrString)

        let binary = try XCTUnwrap(LivePushCLI.binary)
        let garbage = try ProcessRunner.run("/bin/sh", ["-c", "head -c 65536 /dev/urandom | '\(binary)' push - '\(server.url(stream: "y"))'"],
                                            timeout: 30)
        XCTAssertEqual(garbage.exitCode, 1, garbage.summary)
        XCTAssertTrue(garbage.stderrString.contains("notMedia") || garbage.stderrString.contains("noUsableStream"),
                      garbage.stderrString)
    }
}
