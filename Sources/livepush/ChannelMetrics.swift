import Foundation
import LivePush
import Prometheus

/// `GET /metrics`: the channels and the process in Prometheus text format (swift-prometheus).
/// Made fresh at each scrape from the channels' snapshots, so a removed channel leaves no
/// series behind; counters carry the totals since the channel's push started.
enum ChannelMetrics {
    static func render(_ manager: ChannelManager) -> [UInt8] {
        let registry = PrometheusCollectorRegistry()
        let channels = manager.list.map(\.snapshot)
        for status in Channel.Status.allCases {
            registry.makeGauge(name: "livepush_channels", labels: [("state", status.rawValue)],
                               help: "Channels by state.").set(Double(channels.filter { $0.status == status }.count))
        }
        for channel in channels {
            let id = ("channel", channel.id)
            for status in Channel.Status.allCases {
                registry.makeGauge(name: "livepush_channel_state", labels: [id, ("state", status.rawValue)],
                                   help: "1 for the state the channel is in.").set(channel.status == status ? 1.0 : 0.0)
            }
            let stats = channel.stats
            counter(registry, "livepush_channel_bytes_sent_total", [id], "Bytes sent (first output).", stats.bytesSent)
            counter(registry, "livepush_channel_video_frames_sent_total", [id], "Video frames sent (first output).", stats.videoFramesSent)
            counter(registry, "livepush_channel_audio_frames_sent_total", [id], "Audio frames sent (first output).", stats.audioFramesSent)
            registry.makeGauge(name: "livepush_channel_bitrate_bits_per_second", labels: [id], help: "Bits per second sent over the last second.")
                .set(Double(stats.bitrate))
            registry.makeGauge(name: "livepush_channel_media_seconds", labels: [id], help: "Output media time sent.")
                .set(Double(stats.mediaTimeSent) / 1e6)
            registry.makeGauge(name: "livepush_channel_av_offset_seconds", labels: [id],
                               help: "Where the sound sent ends minus where the pictures sent end.").set(Double(stats.avOffset) / 1e6)
            registry.makeGauge(name: "livepush_channel_starts", labels: [id], help: "Times the channel was started.").set(Double(channel.starts))
            for (index, output) in outputs(of: channel).enumerated() {  // labelled by position in the channel's list
                let labels = [id, ("output", String(index))]
                registry.makeGauge(name: "livepush_output_connected", labels: labels, help: "1 while the output is connected.")
                    .set(output.connected ? 1.0 : 0.0)
                counter(registry, "livepush_output_bytes_sent_total", labels, "Bytes the output sent.", output.bytes)
                counter(registry, "livepush_output_video_frames_sent_total", labels, "Video frames the output sent.", output.videoFrames)
                counter(registry, "livepush_output_audio_frames_sent_total", labels, "Audio frames the output sent.", output.audioFrames)
                counter(registry, "livepush_output_reconnects_total", labels, "Reconnects the output began.", output.reconnects)
                registry.makeGauge(name: "livepush_output_queue_seconds", labels: labels, help: "Media waiting in the output's send queue.")
                    .set(Double(output.queued) / 1e6)
                registry.makeGauge(name: "livepush_output_bitrate_bits_per_second", labels: labels, help: "Bits per second the output sent.")
                    .set(Double(output.bitrate))
                for (kind, count) in [("disposable", output.drops.disposable), ("reference", output.drops.reference),
                                      ("keyframe", output.drops.keyframes), ("audio", output.drops.audio)] {
                    counter(registry, "livepush_output_dropped_frames_total", labels + [("kind", kind)], "Frames the output's queue dropped, by kind.", count)
                }
            }
        }
        let process = ProcessFigures.read()
        registry.makeGauge(name: "livepush_process_threads", help: "Threads of the process.").set(Double(process.threads))
        registry.makeGauge(name: "livepush_process_resident_memory_bytes", help: "Resident memory of the process.").set(Double(process.residentBytes))
        return registry.emitToBuffer()
    }

    private static func counter(_ registry: PrometheusCollectorRegistry, _ name: String, _ labels: [(String, String)], _ help: String,
                                _ value: some BinaryInteger) {
        registry.makeCounter(name: name, labels: labels, help: help).increment(by: Double(value))
    }

    /// One output's figures: from the push's per-output stats, or (one output) its own.
    private struct OutputFigures {
        var connected: Bool, bytes: Int64, videoFrames: Int, audioFrames: Int, reconnects: Int, queued: Int64, bitrate: Int, drops: FrameDrops
    }

    private static func outputs(of channel: Channel.Snapshot) -> [OutputFigures] {
        let stats = channel.stats
        return channel.outputs.map { output in
            if let pushID = output.pushID, let figures = stats.outputs.first(where: { $0.id == pushID }) {
                return OutputFigures(connected: output.connected, bytes: figures.bytesSent, videoFrames: figures.videoFramesSent,
                                     audioFrames: figures.audioFramesSent, reconnects: output.reconnects, queued: figures.queuedDuration,
                                     bitrate: figures.bitrate, drops: figures.droppedFrames)
            }
            // One output: the push's own figures are that output's.
            let single = stats.outputs.isEmpty && output.pushID == 0
            return OutputFigures(connected: output.connected, bytes: single ? stats.bytesSent : 0, videoFrames: single ? stats.videoFramesSent : 0,
                                 audioFrames: single ? stats.audioFramesSent : 0, reconnects: output.reconnects,
                                 queued: single ? stats.queuedDuration : 0, bitrate: single ? stats.bitrate : 0,
                                 drops: single ? stats.droppedFrames : FrameDrops())
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
