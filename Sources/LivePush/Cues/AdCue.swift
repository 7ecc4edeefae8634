import FoundationEssentials
import LivePushWire

/// One announcement of an ad break (or blackout) splice, on the output timeline.
public struct AdCue: Sendable, Equatable {
    /// splice_event_id: the same for the announcement ahead and the cue at the splice.
    public var eventID: UInt32
    /// True at the start of the break, false at the return.
    public var outOfNetwork: Bool
    /// Where the splice happens, µs of output time.
    public var spliceTime: Int64
    /// The break's length (the whole pod), µs; nil when not known.
    public var duration: Int64?
    /// Which ad of a pod, and how many (0 when not numbered).
    public var availNum: UInt8 = 0
    /// How many ads the pod holds (0 when not numbered).
    public var availsExpected: UInt8 = 0
    /// When to send it, µs of output time (at or before the splice).
    public var sendAt: Int64
    /// A source's own section, passed on: sent as it is, with its splice time moved to
    /// `spliceTime` (time_signal, segmentation descriptors and all).
    public var original: SpliceInfoSection?

    /// Creates a cue for a splice.
    public init(eventID: UInt32, outOfNetwork: Bool, spliceTime: Int64, duration: Int64?, sendAt: Int64) {
        self.eventID = eventID
        self.outOfNetwork = outOfNetwork
        self.spliceTime = spliceTime
        self.duration = duration
        self.sendAt = sendAt
    }

    /// The SCTE-35 splice_insert it stands for (times at 90 kHz on the stream's timeline).
    public var section: SpliceInfoSection {
        if let original { return original.restamped(toTicks: Self.ticks(spliceTime)) }
        var insert = SpliceInsert(eventID: eventID, outOfNetwork: outOfNetwork, spliceTime: Self.ticks(spliceTime),
                                  breakDuration: duration.map(Self.ticks), autoReturn: true,
                                  availNum: availNum, availsExpected: availsExpected)
        if !outOfNetwork { insert.breakDuration = nil }
        return SpliceInfoSection(command: .insert(insert))
    }

    /// The AMF0 body of the data message in `format` (an HLS form: as ``CueFormat/adCue``).
    public func message(_ format: CueFormat) -> [UInt8] {
        let seconds = MediaTime.microseconds(spliceTime).seconds
        let length = MediaTime.microseconds(duration ?? 0).seconds
        let cue = Data(section.encoded()).base64EncodedString()
        switch format {
        case .adCue, .hls, .cueOut, .oatcls, .dateRange:
            return AMF0.encode([.string("onAdCue"), .object([
                AMF0Property("cue", .string(cue)), AMF0Property("type", .string("scte35")),
                AMF0Property("id", .string(String(eventID))), AMF0Property("duration", .number(length)),
                AMF0Property("time", .number(seconds)),
            ])])
        case .elemental:
            return AMF0.encode([.string("onCuePoint"), .object([
                AMF0Property("name", .string("scte35")), AMF0Property("time", .number(seconds)),
                AMF0Property("type", .string("event")),
                AMF0Property("parameters", .object([
                    AMF0Property("messageType", .string("SpliceInsert")),
                    AMF0Property("splice_command_type", .string("5")),
                    AMF0Property("splice_event_id", .string(String(eventID))),
                    AMF0Property("out_of_network_indicator", .string(outOfNetwork ? "true" : "false")),
                    AMF0Property("break_duration", .string(String(Self.ticks(duration ?? 0)))),
                    AMF0Property("cue", .string(cue)),
                ])),
            ])])
        case .youtube:
            return AMF0.encode([.string("onCuePoint"), .object([
                AMF0Property("type", .string("com.youtube.cuepoint")), AMF0Property("version", .string("0.1")),
                AMF0Property("pre_roll_time_sec", .number(MediaTime.microseconds(max(0, spliceTime - sendAt)).seconds)),
                AMF0Property("cue_point_start", .number(seconds)),
                AMF0Property("break_duration_sec", .number(outOfNetwork ? length : 0)),
                AMF0Property("splice_event_id", .number(Double(eventID))),
            ])])
        }
    }

    static func ticks(_ micros: Int64) -> UInt64 {
        (UInt64(max(0, micros)) * SCTE35.clockRate / 1_000_000) & SCTE35.ticksMask
    }
}
