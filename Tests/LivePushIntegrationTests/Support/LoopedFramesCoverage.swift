import Foundation

/// Which video frames of a looped source a recording holds: every frame of every pass, not a
/// count that frames sent twice after a reconnect can make up for (nginx records the GOP a
/// `--fast` push sends again, so "at least passes × frames" held while 15 frames were lost).
///
/// Frames are told apart by ffprobe's MD5 of their data (the source's frames must all differ:
/// the samples' do). nginx with `record_append` writes the codec headers again at each
/// publish, which ffprobe shows as new extradata on that publish's first frame: the recording
/// splits there into publishes. Within one publish the frames must follow the source in order
/// (pass after pass). The first publish starts at the first frame of the first pass and the
/// last one ends at the last frame of the last pass; one in between is taken to start as late as
/// it can (at most one frame after where the one before ended). What no publish covers is lost.
struct LoopedFramesCoverage {
    /// Video frames in the recording, the repeats included.
    let recorded: Int
    /// Recorded frames per publish.
    let publishes: [Int]
    /// (pass, frame) of every frame of the looped source the recording does not hold.
    let missing: [(pass: Int, frame: Int)]
    /// What does not fit the model: a frame not of the source, a jump inside a publish, a
    /// wrong first or last frame. Empty when the recording is understood.
    let problems: [String]

    /// Probes `source` and `recording` (ffprobe) and finds what of `passes` passes arrived.
    init(source: String, recording: String, passes: Int) throws {
        let sourceFrames = try Self.videoFrames(source)
        var index: [String: Int] = [:]
        for (i, frame) in sourceFrames.enumerated() { index[frame.hash] = i }
        precondition(index.count == sourceFrames.count, "the source has identical frames: they cannot be told apart")
        let frames = try Self.videoFrames(recording)
        var problems: [String] = []
        // Each publish as source frame indices, in recording order.
        var runs: [[Int]] = []
        for (k, frame) in frames.enumerated() {
            guard let i = index[frame.hash] else {
                problems.append("recorded frame #\(k) is no frame of the source")
                continue
            }
            if frame.startsPublish || runs.isEmpty { runs.append([]) }
            runs[runs.count - 1].append(i)
        }
        self.init(runs: runs, framesPerPass: sourceFrames.count, passes: passes, problems: problems, recorded: frames.count)
    }

    /// The model itself, on source frame indices per publish.
    init(runs: [[Int]], framesPerPass n: Int, passes: Int, problems: [String] = [], recorded: Int) {
        var problems = problems
        var covered = [Bool](repeating: false, count: n * passes)
        var previousEnd = -1
        for (r, run) in runs.enumerated() where !run.isEmpty {
            for k in 1..<max(1, run.count) where run[k] != (run[k - 1] + 1) % n {
                problems.append("publish \(r + 1) jumps from frame \(run[k - 1]) to \(run[k]) at its frame #\(k)")
            }
            let start: Int
            if r == 0 {
                start = 0
                if run[0] != 0 { problems.append("the first publish starts at frame \(run[0]), not 0") }
            } else if r == runs.count - 1 {
                start = n * passes - run.count
                if run[run.count - 1] != n - 1 { problems.append("the last publish ends at frame \(run[run.count - 1]), not \(n - 1)") }
            } else {
                let latest = previousEnd + 1
                start = latest - ((latest - run[0]) % n + n) % n
            }
            for position in max(0, start)..<min(covered.count, start + run.count) { covered[position] = true }
            previousEnd = start + run.count - 1
        }
        self.recorded = recorded
        publishes = runs.map(\.count)
        missing = covered.indices.filter { !covered[$0] }.map { (pass: $0 / n, frame: $0 % n) }
        self.problems = problems
    }

    /// A line for a failure message.
    var summary: String {
        let lost = missing.prefix(40).map { "\($0.pass).\($0.frame)" }.joined(separator: " ")
        return "\(recorded) frames recorded in \(publishes.count) publishes \(publishes); "
            + "\(missing.count) lost (pass.frame): \(lost)\(missing.count > 40 ? " …" : ""); problems: \(problems)"
    }

    private struct Frame: Decodable {
        let hash: String
        let startsPublish: Bool

        enum CodingKeys: String, CodingKey { case hash = "data_hash", sideData = "side_data_list" }
        struct SideData: Decodable {
            let type: String?
            enum CodingKeys: String, CodingKey { case type = "side_data_type" }
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            hash = try c.decode(String.self, forKey: .hash)
            let sideData = try c.decodeIfPresent([SideData].self, forKey: .sideData) ?? []
            startsPublish = sideData.contains { $0.type == "New Extradata" }
        }
    }

    private struct Probe: Decodable { let packets: [Frame] }

    private static func videoFrames(_ path: String) throws -> [Frame] {
        let result = try ProcessRunner.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries",
                                                       "packet=data_hash:packet_side_data=side_data_type",
                                                       "-show_data_hash", "MD5", "-of", "json", path], timeout: 30)
        guard result.succeeded else { throw FFProbe.Failure.ffprobeFailed(result) }
        return try JSONDecoder().decode(Probe.self, from: result.stdout).packets
    }
}
