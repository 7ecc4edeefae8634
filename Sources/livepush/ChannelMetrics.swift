import FoundationEssentials
import LivePush
import Prometheus
import Synchronization

/// `GET /metrics`: the channels and the process in Prometheus text format (swift-prometheus).
///
/// One registry lives as long as the server: each scrape sets the values of the series it
/// already has, so a scrape costs the same per channel at 200 channels as at one (a fresh
/// registry per scrape adds every series anew, and swift-prometheus copies a family for each
/// series it adds: at 200 channels a scrape took 230 ms of CPU). The series of a channel that
/// is gone are removed. Counters carry the totals since the channel's push started.
final class ChannelMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    /// The series made for each channel, to remove them with it. Scrapes run one at a time:
    /// a counter is reset and set to its total in two steps.
    private let series = Mutex<[String: [Series]]>([:])

    private enum Series: Sendable {
        case gauge(Gauge)
        case counter(Counter)

        var identity: ObjectIdentifier {
            switch self {
            case .gauge(let gauge): ObjectIdentifier(gauge)
            case .counter(let counter): ObjectIdentifier(counter)
            }
        }
    }

    private func unregister(_ gone: [Series]) {
        for item in gone {
            switch item {
            case .gauge(let gauge): registry.unregisterGauge(gauge)
            case .counter(let counter): registry.unregisterCounter(counter)
            }
        }
    }

    func render(_ manager: ChannelManager) -> [UInt8] {
        series.withLock { series in
            let channels = manager.list.map(\.snapshot)
            for status in Channel.Status.allCases {
                registry.makeGauge(descriptor: Self.named("livepush_channels", "Channels by state."),
                                   labels: [("state", status.rawValue)]).set(Double(channels.filter { $0.status == status }.count))
            }
            var present = Set<String>()
            for channel in channels {
                present.insert(channel.id)
                var made: [Series] = []
                record(channel, into: &made)
                // An output removed from the channel leaves its series behind otherwise.
                let kept = Set(made.map(\.identity))
                unregister((series[channel.id] ?? []).filter { !kept.contains($0.identity) })
                series[channel.id] = made
            }
            for (id, gone) in series where !present.contains(id) {
                unregister(gone)
                series[id] = nil
            }
            let process = ProcessFigures.read()
            registry.makeGauge(descriptor: Self.named("livepush_process_threads", "Threads of the process.")).set(Double(process.threads))
            registry.makeGauge(descriptor: Self.named("livepush_process_resident_memory_bytes", "Resident memory of the process."))
                .set(Double(process.residentBytes))
            return registry.emitToBuffer()
        }
    }

    /// A metric's full name and help (the names carry their unit already: `_bytes`, `_total`, `_seconds`).
    private static func named(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    private func record(_ channel: Channel.Snapshot, into made: inout [Series]) {
        func gauge(_ name: String, _ labels: [(String, String)], _ help: String, _ value: Double) {
            let gauge = registry.makeGauge(descriptor: Self.named(name, help), labels: labels)
            gauge.set(value)
            made.append(.gauge(gauge))
        }
        func counter(_ name: String, _ labels: [(String, String)], _ help: String, _ value: some BinaryInteger) {
            let counter = registry.makeCounter(descriptor: Self.named(name, help), labels: labels)
            counter.reset()
            counter.increment(by: Double(value))
            made.append(.counter(counter))
        }
        let id = ("channel", channel.id)
        for status in Channel.Status.allCases {
            gauge("livepush_channel_state", [id, ("state", status.rawValue)], "1 for the state the channel is in.",
                  channel.status == status ? 1 : 0)
        }
        let stats = channel.stats
        counter("livepush_channel_bytes_sent_total", [id], "Bytes sent (first output).", stats.bytesSent)
        counter("livepush_channel_video_frames_sent_total", [id], "Video frames sent (first output).", stats.videoFramesSent)
        counter("livepush_channel_audio_frames_sent_total", [id], "Audio frames sent (first output).", stats.audioFramesSent)
        gauge("livepush_channel_bitrate_bits_per_second", [id], "Bits per second sent over the last second.", Double(stats.bitrate))
        gauge("livepush_channel_media_seconds", [id], "Output media time sent.", Double(stats.mediaTimeSent) / 1e6)
        // Read in one snapshot with the media time, so that it does not depend on when the
        // scrape gets to the channel: what a pacing check compares across scrapes.
        let elapsed = Double(stats.elapsed.components.seconds) + Double(stats.elapsed.components.attoseconds) / 1e18
        gauge("livepush_channel_lead_seconds", [id], "Output media time sent minus the time the push has run: steady in real time.",
              Double(stats.mediaTimeSent) / 1e6 - elapsed)
        gauge("livepush_channel_av_offset_seconds", [id], "Where the sound sent ends minus where the pictures sent end.",
              Double(stats.avOffset) / 1e6)
        func lateness(_ prefix: String, _ labels: [(String, String)], _ late: PacingLateness, _ what: String) {
            for (bound, count) in [("0.02", late.packetsLaterThan20ms), ("0.05", late.packetsLaterThan50ms), ("0.1", late.packetsLaterThan100ms)] {
                counter(prefix + "_late_packets_total", labels + [("later_than", bound)],
                        "Packets \(what) later than this many seconds after the output clock made them due.", count)
            }
            gauge(prefix + "_pacing_lateness_worst_seconds", labels, "The latest a packet was \(what) since the push started.",
                  Double(late.worst) / 1e6)
        }
        lateness("livepush_channel", [id], stats.lateness, "handed to the outputs")
        gauge("livepush_channel_starts", [id], "Times the channel was started.", Double(channel.starts))
        gauge("livepush_channel_next_attempt_seconds", [id],
              "While the channel is reconnecting: seconds until its next attempt (else 0).",
              Double(channel.nextAttemptIn?.nanosecondsValue ?? 0) / 1e9)
        gauge("livepush_channel_last_error_code", [id], "The code of the channel's last error (0: none).",
              Double(channel.lastError?.code.rawValue ?? 0))
        if let input = stats.input {
            for source in LiveInputSource.allCases {
                gauge("livepush_channel_input_on_air", [id, ("source", source.rawValue)],
                      "1 for what a live input's channel shows: its feed (primary), the backup or the slate.", input.onAir == source ? 1 : 0)
            }
            counter("livepush_channel_input_switches_total", [id], "Switches between a live input's feed, backup and slate.", input.switches)
            counter("livepush_channel_input_filled_frames_total", [id], "Frame slots the live feed was late for (filled).", input.filledFrames)
        }
        if let loudness = stats.loudness {
            // A figure with nothing to measure yet (before 400 ms or 3 s, or silence) has no
            // series: Prometheus has no -inf that every parser takes.
            for (name, value, help) in [("momentary", loudness.momentary, "Momentary loudness (400 ms) of the sound sent, LUFS."),
                                        ("short_term", loudness.shortTerm, "Short-term loudness (3 s) of the sound sent, LUFS."),
                                        ("integrated", loudness.integrated, "Integrated loudness of the sound sent since the push started, LUFS.")] {
                if let value { gauge("livepush_channel_loudness_\(name)_lufs", [id], help, value) }
            }
            if let peak = loudness.truePeak {
                gauge("livepush_channel_true_peak_dbtp", [id], "The highest true peak of the sound sent since the push started, dBTP.", peak)
            }
            gauge("livepush_channel_loudness_target_lufs", [id], "The loudness the channel normalises to, LUFS.", loudness.target)
            gauge("livepush_channel_loudness_gain_db", [id], "The gain the loudness stage applies now, dB.", loudness.gain)
        }
        for (index, output) in Self.outputs(of: channel).enumerated() {  // labelled by position in the channel's list
            let labels = [id, ("output", String(index))]
            gauge("livepush_output_connected", labels, "1 while the output is connected.", output.connected ? 1 : 0)
            counter("livepush_output_bytes_sent_total", labels, "Bytes the output sent.", output.bytes)
            counter("livepush_output_video_frames_sent_total", labels, "Video frames the output sent.", output.videoFrames)
            counter("livepush_output_audio_frames_sent_total", labels, "Audio frames the output sent.", output.audioFrames)
            counter("livepush_output_reconnects_total", labels, "Reconnects the output began.", output.reconnects)
            gauge("livepush_output_queue_seconds", labels, "Media waiting in the output's send queue.", Double(output.queued) / 1e6)
            gauge("livepush_output_bitrate_bits_per_second", labels, "Bits per second the output sent.", Double(output.bitrate))
            lateness("livepush_output", labels, output.lateness, "written to the output's socket")
            if let link = output.srt {
                gauge("livepush_output_srt_rtt_seconds", labels, "An SRT output's round-trip time, as SRT measures it.", link.roundTripMs / 1000)
                counter("livepush_output_srt_packets_lost_total", labels, "Packets an SRT output's peer reported lost.", link.packetsLost)
                counter("livepush_output_srt_packets_retransmitted_total", labels, "Packets an SRT output sent again.", link.packetsRetransmitted)
                counter("livepush_output_srt_packets_dropped_total", labels, "Packets an SRT output dropped as too late.", link.packetsDropped)
            }
            for (kind, count) in [("disposable", output.drops.disposable), ("reference", output.drops.reference),
                                  ("keyframe", output.drops.keyframes), ("audio", output.drops.audio)] {
                counter("livepush_output_dropped_frames_total", labels + [("kind", kind)], "Frames the output's queue dropped, by kind.", count)
            }
        }
    }

    /// One output's figures: from the push's per-output stats, or (one output) its own.
    private struct OutputFigures {
        var connected: Bool, bytes: Int64, videoFrames: Int, audioFrames: Int, reconnects: Int, queued: Int64, bitrate: Int, drops: FrameDrops
        var lateness: PacingLateness
        var srt: SRTLinkStats? = nil
    }

    private static func outputs(of channel: Channel.Snapshot) -> [OutputFigures] {
        let stats = channel.stats
        return channel.outputs.map { output in
            if let pushID = output.pushID, let figures = stats.outputs.first(where: { $0.id == pushID }) {
                return OutputFigures(connected: output.connected, bytes: figures.bytesSent, videoFrames: figures.videoFramesSent,
                                     audioFrames: figures.audioFramesSent, reconnects: output.reconnects, queued: figures.queuedDuration,
                                     bitrate: figures.bitrate, drops: figures.droppedFrames, lateness: figures.sendLateness,
                                     srt: figures.srt)
            }
            // One output: the push's own figures are that output's.
            let single = stats.outputs.isEmpty && output.pushID == 0
            return OutputFigures(connected: output.connected, bytes: single ? stats.bytesSent : 0, videoFrames: single ? stats.videoFramesSent : 0,
                                 audioFrames: single ? stats.audioFramesSent : 0, reconnects: output.reconnects,
                                 queued: single ? stats.queuedDuration : 0, bitrate: single ? stats.bitrate : 0,
                                 drops: single ? stats.droppedFrames : FrameDrops(), lateness: single ? stats.sendLateness : PacingLateness())
        }
    }
}

/// The process's threads and resident memory, from /proc/self/status.
enum ProcessFigures {
    static func read() -> (threads: Int, residentBytes: Int) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        var threads = 0, resident = 0
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if line.hasPrefix("Threads:"), parts.count >= 2 { threads = Int(parts[1]) ?? 0 }
            if line.hasPrefix("VmRSS:"), parts.count >= 2 { resident = (Int(parts[1]) ?? 0) * 1024 }
        }
        return (threads, resident)
    }
}
