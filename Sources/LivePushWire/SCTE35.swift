/// SCTE-35 `splice_info_section`s: parsed from a source's cue stream, and built for the cues
/// LivePush sends (ANSI/SCTE 35). Pure Swift on byte arrays; the CRC-32/MPEG-2 is checked on
/// the way in and written on the way out. Encrypted sections are refused, not decrypted.
public enum SCTE35 {
    /// 90 kHz ticks, 33 bits.
    public static let clockRate: UInt64 = 90_000
    public static let ticksMask: UInt64 = (1 << 33) - 1
    /// "CUEI", the identifier of SCTE-35's own descriptors.
    public static let cueIdentifier: UInt32 = 0x4355_4549

    public enum ParseError: Error, Equatable, Sendable {
        case truncated
        case notASpliceInfoSection(tableID: UInt8)
        case badLength
        case crcMismatch(expected: UInt32, found: UInt32)
        case encrypted
    }

    /// CRC-32/MPEG-2: polynomial 0x04C11DB7, initial value 0xFFFFFFFF, not reflected, no final XOR.
    public static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}

/// One `splice_info_section`.
public struct SpliceInfoSection: Equatable, Sendable {
    public var protocolVersion: UInt8 = 0
    /// Added to every PTS in the section (33 bits, 90 kHz).
    public var ptsAdjustment: UInt64 = 0
    public var tier: UInt16 = 0xFFF
    public var command: SpliceCommand
    public var descriptors: [SpliceDescriptor]

    public init(command: SpliceCommand, descriptors: [SpliceDescriptor] = [], ptsAdjustment: UInt64 = 0) {
        self.command = command
        self.descriptors = descriptors
        self.ptsAdjustment = ptsAdjustment
    }
}

public enum SpliceCommand: Equatable, Sendable {
    case null
    case insert(SpliceInsert)
    /// `time_signal`: the splice time (90 kHz PTS), nil when not specified (immediate).
    case timeSignal(UInt64?)
    /// Any other command (bandwidth_reservation, private_command...), kept as bytes.
    case other(type: UInt8, bytes: [UInt8])

    var type: UInt8 {
        switch self {
        case .null: 0x00
        case .insert: 0x05
        case .timeSignal: 0x06
        case .other(let type, _): type
        }
    }
}

public struct SpliceInsert: Equatable, Sendable {
    public var eventID: UInt32
    public var cancel = false
    /// True at the start of a break (out of the network), false at the return.
    public var outOfNetwork = true
    public var programSplice = true
    /// The splice time (90 kHz PTS); nil with `spliceImmediate`.
    public var spliceTime: UInt64?
    public var spliceImmediate: Bool { spliceTime == nil }
    /// `break_duration`: 90 kHz ticks, and whether the return is automatic.
    public var breakDuration: UInt64?
    public var autoReturn = true
    public var uniqueProgramID: UInt16 = 0
    public var availNum: UInt8 = 0
    public var availsExpected: UInt8 = 0
    /// Component splices (program_splice_flag 0): tag and optional time each.
    public var components: [(tag: UInt8, time: UInt64?)] = []

    public init(eventID: UInt32, outOfNetwork: Bool = true, spliceTime: UInt64?, breakDuration: UInt64? = nil,
                autoReturn: Bool = true, availNum: UInt8 = 0, availsExpected: UInt8 = 0) {
        self.eventID = eventID
        self.outOfNetwork = outOfNetwork
        self.spliceTime = spliceTime
        self.breakDuration = breakDuration
        self.autoReturn = autoReturn
        self.availNum = availNum
        self.availsExpected = availsExpected
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.eventID == b.eventID && a.cancel == b.cancel && a.outOfNetwork == b.outOfNetwork && a.programSplice == b.programSplice
            && a.spliceTime == b.spliceTime && a.breakDuration == b.breakDuration
            && (a.breakDuration == nil || a.autoReturn == b.autoReturn)  // auto_return travels with a duration
            && a.uniqueProgramID == b.uniqueProgramID && a.availNum == b.availNum && a.availsExpected == b.availsExpected
            && a.components.map(\.tag) == b.components.map(\.tag) && a.components.map(\.time) == b.components.map(\.time)
    }
}

public enum SpliceDescriptor: Equatable, Sendable {
    case segmentation(SegmentationDescriptor)
    /// Any other descriptor (avail, DTMF, time...), kept as its body after the identifier.
    case other(tag: UInt8, identifier: UInt32, bytes: [UInt8])
}

/// `segmentation_descriptor` (tag 0x02, "CUEI").
public struct SegmentationDescriptor: Equatable, Sendable {
    public var eventID: UInt32
    public var cancel = false
    /// 90 kHz ticks (40 bits), when given.
    public var duration: UInt64?
    public var upidType: UInt8 = 0
    public var upid: [UInt8] = []
    /// 0x10/0x11 program start/end, 0x18/0x19 program blackout override, 0x22/0x23 break,
    /// 0x30–0x33 advertisement, 0x34/0x35 provider and 0x36/0x37 distributor placement
    /// opportunity start/end...
    public var typeID: UInt8
    public var segmentNum: UInt8 = 0
    public var segmentsExpected: UInt8 = 0
    public var subSegment: (num: UInt8, expected: UInt8)?
    /// The byte after the flags, kept as read (delivery restrictions); written as "not restricted".
    public var restrictions: UInt8 = 0xFF

    public init(eventID: UInt32, typeID: UInt8, duration: UInt64? = nil) {
        self.eventID = eventID
        self.typeID = typeID
        self.duration = duration
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.eventID == b.eventID && a.cancel == b.cancel && a.duration == b.duration && a.upidType == b.upidType
            && a.upid == b.upid && a.typeID == b.typeID && a.segmentNum == b.segmentNum
            && a.segmentsExpected == b.segmentsExpected && a.subSegment?.num == b.subSegment?.num
            && a.subSegment?.expected == b.subSegment?.expected
    }
}
