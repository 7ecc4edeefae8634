import Foundation
@testable import LivePush
import XCTest

/// A copy-mode playout clip whose video cannot be copied yields raw pictures (encoded after the
/// clock), which carry no GOP keyframes: it is cut at its `out` point to the frame, not at
/// "the first keyframe at or after out" (which never comes: it ran to the file's end).
final class ClipInputCopyModeTests: XCTestCase {
    func testADecodedClipInCopyModeEndsAtItsOutPoint() throws {
        try XCTSkipUnless(MediaTestFiles.toolsAvailable, "ffmpeg/ffprobe not installed")
        let files = try MediaTestFiles()
        // 2 s of MPEG-4 Part 2 (not copyable) at 25 fps; the clip takes 0-1 s.
        let path = try files.make("mpeg4.avi", MediaTestFiles.video + MediaTestFiles.audio
            + ["-c:v", "mpeg4", "-c:a", "libmp3lame", "-b:a", "64k"])
        let clip = try ClipInput(path: path, in: 0, out: 1, options: MediaSourceOptions(), copy: true, stages: FrameStages())
        XCTAssertNotNil(clip.info.video?.pictureSettings, "the clip yields pictures")
        let packets = try MediaTestFiles.drain(clip)
        let pictures = packets.filter { $0.kind == .video }
        // About 1 s at 25 fps (the decoder's first picture may fall a frame late); 50 before: the whole file.
        XCTAssertTrue((23...26).contains(pictures.count), "\(pictures.count) pictures")
        XCTAssertLessThan(pictures.map(\.pts).max() ?? .max, 1_000_000)
        let sound = packets.filter { $0.kind == .audio }
        XCTAssertLessThan(sound.map { $0.pts + $0.duration / 2 }.max() ?? .max, 1_000_000, "no sound past out")
        XCTAssertGreaterThan(sound.count, 35, "about 1 s of sound")
    }
}
