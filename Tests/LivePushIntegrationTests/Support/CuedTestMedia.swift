import Foundation
import XCTest

/// MPEG-TS with SCTE-35 cues in it, made the way a broadcaster's feed carries them: encoded by
/// ffmpeg, then cues put in by threefive's `scte35inject` (mainline FFmpeg cannot write them).
enum CuedTestMedia {
    /// A splice_insert, built by threefive: out of the network at `at` s of the media for
    /// `duration` s (auto-return), or back in (`duration` nil); put in `ahead` s before.
    struct Cue {
        var eventID: Int
        var at: Double
        var duration: Double?
        var ahead = 2.0
        /// Marked encrypted (with a CRC that matches): a reader that cannot decrypt must refuse
        /// it. (A section whose CRC fails never gets this far: FFmpeg's demuxer drops it.)
        var corrupt = false
    }

    /// `main` (its colour and tone) for `seconds`, then `after` for `afterSeconds`, as one TS
    /// (1 s GOPs, no B-frames) with the cues at media times (seconds from the first packet).
    /// `timestampOffset` moves the whole TS (its PTS and the cues' splice times) that much later,
    /// so that a receiver can tell a cue re-stamped onto its output from one passed as it was.
    static func make(in dir: URL, main: PlayoutClip, seconds: Double, then after: PlayoutClip, for afterSeconds: Double,
                     cues: [Cue], timestampOffset: Double = 0) throws -> String {
        let plain = dir.appendingPathComponent("plain.ts").path
        let total = seconds + afterSeconds
        let made = try ProcessRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y",
            "-f", "lavfi", "-i", "color=c=\(main.color):s=320x240:r=25:d=\(seconds)",
            "-f", "lavfi", "-i", "color=c=\(after.color):s=320x240:r=25:d=\(afterSeconds)",
            "-f", "lavfi", "-i", "sine=frequency=\(Int(main.tone)):sample_rate=44100:duration=\(seconds)",
            "-f", "lavfi", "-i", "sine=frequency=\(Int(after.tone)):sample_rate=44100:duration=\(afterSeconds)",
            "-filter_complex", "[0:v][2:a][1:v][3:a]concat=n=2:v=1:a=1[v][a]", "-map", "[v]", "-map", "[a]",
            "-c:v", "libx264", "-preset", "ultrafast", "-bf", "0", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2", "-t", "\(total)",
            "-output_ts_offset", "\(timestampOffset)", "-f", "mpegts", plain,
        ], timeout: 120)
        XCTAssertTrue(made.succeeded, made.summary)
        // The media's own timeline starts where its first packet is (MPEG-TS adds 1.4 s).
        let probe = try ProcessRunner.run("ffprobe", ["-v", "error", "-show_entries", "stream=start_time", "-of", "csv=p=0", plain], timeout: 30)
        let origin = probe.stdoutString.split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: .punctuationCharacters)) }.min() ?? 1.4
        let python = try PythonTools.python(with: ["threefive"])
        let script = """
        import base64, sys
        from threefive import Cue, SpliceInsert
        origin = float(sys.argv[1])
        for spec in sys.argv[2:]:
            event, at, duration, ahead, corrupt = spec.split(":")
            insert = SpliceInsert()
            insert.splice_event_id = int(event)
            insert.splice_event_cancel_indicator = False
            insert.out_of_network_indicator = duration != ""
            insert.program_splice_flag = True
            insert.splice_immediate_flag = False
            insert.time_specified_flag = True
            insert.pts_time = origin + float(at)
            insert.duration_flag = duration != ""
            if duration:
                insert.break_auto_return = True
                insert.break_duration = float(duration)
            insert.unique_program_id = 1
            insert.avail_num = 0
            insert.avails_expected = 0
            insert.event_id_compliance_flag = True
            cue = Cue()
            cue.command = insert
            encoded = cue.encode()
            if corrupt == "1":
                section = bytearray(base64.b64decode(encoded))
                section[4] |= 0x80  # encrypted_packet
                crc = 0xFFFFFFFF  # CRC-32/MPEG-2
                for byte in section[:-4]:
                    crc ^= byte << 24
                    for _ in range(8):
                        crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
                section[-4:] = crc.to_bytes(4, "big")
                encoded = base64.b64encode(bytes(section)).decode()
            print(f"{origin + float(at) - float(ahead):.6f},{encoded}")
        """
        let specs = cues.map { "\($0.eventID):\($0.at):\($0.duration.map { String($0) } ?? ""):\($0.ahead):\($0.corrupt ? 1 : 0)" }
        let sidecar = try ProcessRunner.run(python, ["-c", script, String(origin)] + specs, timeout: 60)
        XCTAssertTrue(sidecar.succeeded, sidecar.summary)
        let sidecarPath = dir.appendingPathComponent("sidecar.txt").path
        try sidecar.stdoutString.write(toFile: sidecarPath, atomically: true, encoding: .utf8)
        let cued = dir.appendingPathComponent("cued.ts").path
        let inject = URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent("scte35inject").path
        let injected = try ProcessRunner.run(inject, ["-i", plain, "-o", cued, "-s", sidecarPath], timeout: 120)
        XCTAssertTrue(injected.succeeded, injected.summary)
        return cued
    }
}
