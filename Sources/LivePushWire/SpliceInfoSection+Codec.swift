extension SpliceInfoSection {
    /// Parses one section (as an mpegts SCTE-35 data packet or a base64 cue carries it).
    public init(parsing bytes: [UInt8]) throws(SCTE35.ParseError) {
        var r = BitReader(bytes)
        let tableID = UInt8(try r.bits(8))
        guard tableID == 0xFC else { throw .notASpliceInfoSection(tableID: tableID) }
        try r.skip(4)  // section_syntax_indicator, private_indicator, sap_type
        let sectionLength = Int(try r.bits(12))
        guard sectionLength >= 17, 3 + sectionLength <= bytes.count else { throw .badLength }
        let end = 3 + sectionLength
        let found = UInt32(bytes[end - 4]) << 24 | UInt32(bytes[end - 3]) << 16 | UInt32(bytes[end - 2]) << 8 | UInt32(bytes[end - 1])
        let expected = SCTE35.crc32(bytes[0..<(end - 4)])
        guard expected == found else { throw .crcMismatch(expected: expected, found: found) }
        protocolVersion = UInt8(try r.bits(8))
        guard try r.bits(1) == 0 else { throw .encrypted }
        try r.skip(6)
        ptsAdjustment = try r.bits(33)
        try r.skip(8)  // cw_index
        tier = UInt16(try r.bits(12))
        let commandLength = Int(try r.bits(12))
        let commandType = UInt8(try r.bits(8))
        let commandStart = r.byteOffset
        switch commandType {
        case 0x00: command = .null
        case 0x05: command = .insert(try Self.parseInsert(&r))
        case 0x06: command = .timeSignal(try Self.parseSpliceTime(&r))
        default:
            // 0xFFF: the length is not given (legacy); only known commands can be skipped then.
            guard commandLength != 0xFFF else { throw .badLength }
            command = .other(type: commandType, bytes: try r.bytes(commandLength))
        }
        if commandLength != 0xFFF {
            guard r.byteOffset <= commandStart + commandLength else { throw .badLength }
            try r.seek(toByte: commandStart + commandLength)
        }
        let loopLength = Int(try r.bits(16))
        let loopEnd = r.byteOffset + loopLength
        guard loopEnd <= end - 4 else { throw .badLength }
        descriptors = []
        while r.byteOffset + 2 <= loopEnd {
            let tag = UInt8(try r.bits(8))
            let length = Int(try r.bits(8))
            guard length >= 4, r.byteOffset + length <= loopEnd else { throw .badLength }
            let body = try r.bytes(length)
            descriptors.append(try Self.parseDescriptor(tag: tag, body))
        }
    }

    private static func parseSpliceTime(_ r: inout BitReader) throws(SCTE35.ParseError) -> UInt64? {
        guard try r.bits(1) == 1 else {
            try r.skip(7)
            return nil
        }
        try r.skip(6)
        return try r.bits(33)
    }

    private static func parseInsert(_ r: inout BitReader) throws(SCTE35.ParseError) -> SpliceInsert {
        var insert = SpliceInsert(eventID: UInt32(try r.bits(32)), spliceTime: nil)
        insert.cancel = try r.bits(1) == 1
        try r.skip(7)
        guard !insert.cancel else { return insert }
        insert.outOfNetwork = try r.bits(1) == 1
        insert.programSplice = try r.bits(1) == 1
        let hasDuration = try r.bits(1) == 1
        let immediate = try r.bits(1) == 1
        try r.skip(4)
        if insert.programSplice {
            if !immediate { insert.spliceTime = try parseSpliceTime(&r) }
        } else {
            let count = Int(try r.bits(8))
            for _ in 0..<count {
                let tag = UInt8(try r.bits(8))
                insert.components.append((tag, immediate ? nil : try parseSpliceTime(&r)))
            }
        }
        if hasDuration {
            insert.autoReturn = try r.bits(1) == 1
            try r.skip(6)
            insert.breakDuration = try r.bits(33)
        }
        insert.uniqueProgramID = UInt16(try r.bits(16))
        insert.availNum = UInt8(try r.bits(8))
        insert.availsExpected = UInt8(try r.bits(8))
        return insert
    }

    private static func parseDescriptor(tag: UInt8, _ body: [UInt8]) throws(SCTE35.ParseError) -> SpliceDescriptor {
        var r = BitReader(body)
        let identifier = UInt32(try r.bits(32))
        guard tag == 0x02, identifier == SCTE35.cueIdentifier else {
            return .other(tag: tag, identifier: identifier, bytes: Array(body[4...]))
        }
        var d = SegmentationDescriptor(eventID: UInt32(try r.bits(32)), typeID: 0)
        d.cancel = try r.bits(1) == 1
        try r.skip(7)
        guard !d.cancel else { return .segmentation(d) }
        let programSegmentation = try r.bits(1) == 1
        let hasDuration = try r.bits(1) == 1
        d.restrictions = UInt8(try r.bits(6)) | 0xC0
        if !programSegmentation {
            let count = Int(try r.bits(8))
            try r.skip(count * 48)  // component_tag, reserved, pts_offset
        }
        if hasDuration { d.duration = try r.bits(40) }
        d.upidType = UInt8(try r.bits(8))
        d.upid = try r.bytes(Int(try r.bits(8)))
        d.typeID = UInt8(try r.bits(8))
        d.segmentNum = UInt8(try r.bits(8))
        d.segmentsExpected = UInt8(try r.bits(8))
        if r.bytesLeft >= 2 { d.subSegment = (UInt8(try r.bits(8)), UInt8(try r.bits(8))) }
        return .segmentation(d)
    }

    /// The section's bytes, with its CRC.
    public func encoded() -> [UInt8] {
        var body = BitWriter()
        switch command {
        case .null: break
        case .insert(let insert): Self.write(insert, to: &body)
        case .timeSignal(let time): Self.writeSpliceTime(time, to: &body)
        case .other(_, let bytes): body.append(bytes)
        }
        var loop = BitWriter()
        for descriptor in descriptors {
            var d = BitWriter()
            switch descriptor {
            case .segmentation(let s):
                d.write(UInt64(SCTE35.cueIdentifier), 32)
                Self.write(s, to: &d)
                loop.write(0x02, 8)
            case .other(let tag, let identifier, let bytes):
                d.write(UInt64(identifier), 32)
                d.append(bytes)
                loop.write(UInt64(tag), 8)
            }
            loop.write(UInt64(d.bytes.count), 8)
            loop.append(d.bytes)
        }
        var out = BitWriter()
        out.write(0xFC, 8)
        out.write(0b0011, 4)  // section_syntax_indicator 0, private 0, sap_type 3 (not specified)
        out.write(UInt64(11 + body.bytes.count + 2 + loop.bytes.count + 4), 12)
        out.write(UInt64(protocolVersion), 8)
        out.write(0, 7)  // not encrypted, algorithm 0
        out.write(ptsAdjustment & SCTE35.ticksMask, 33)
        out.write(0xFF, 8)  // cw_index
        out.write(UInt64(tier), 12)
        out.write(UInt64(body.bytes.count), 12)
        out.write(UInt64(command.type), 8)
        out.append(body.bytes)
        out.write(UInt64(loop.bytes.count), 16)
        out.append(loop.bytes)
        let crc = SCTE35.crc32(out.bytes)
        out.write(UInt64(crc), 32)
        return out.bytes
    }

    private static func writeSpliceTime(_ time: UInt64?, to w: inout BitWriter) {
        if let time {
            w.write(1, 1)
            w.write(0x3F, 6)
            w.write(time & SCTE35.ticksMask, 33)
        } else {
            w.write(0x7F, 8)  // time_specified_flag 0, reserved
        }
    }

    private static func write(_ insert: SpliceInsert, to w: inout BitWriter) {
        w.write(UInt64(insert.eventID), 32)
        w.write(insert.cancel ? 1 : 0, 1)
        w.write(0x7F, 7)
        guard !insert.cancel else { return }
        w.write(insert.outOfNetwork ? 1 : 0, 1)
        w.write(insert.programSplice ? 1 : 0, 1)
        w.write(insert.breakDuration != nil ? 1 : 0, 1)
        w.write(insert.spliceImmediate ? 1 : 0, 1)
        w.write(0xF, 4)
        if insert.programSplice {
            if let time = insert.spliceTime { writeSpliceTime(time, to: &w) }
        } else {
            w.write(UInt64(insert.components.count), 8)
            for component in insert.components {
                w.write(UInt64(component.tag), 8)
                if !insert.spliceImmediate { writeSpliceTime(component.time, to: &w) }
            }
        }
        if let duration = insert.breakDuration {
            w.write(insert.autoReturn ? 1 : 0, 1)
            w.write(0x3F, 6)
            w.write(duration & SCTE35.ticksMask, 33)
        }
        w.write(UInt64(insert.uniqueProgramID), 16)
        w.write(UInt64(insert.availNum), 8)
        w.write(UInt64(insert.availsExpected), 8)
    }

    private static func write(_ s: SegmentationDescriptor, to w: inout BitWriter) {
        w.write(UInt64(s.eventID), 32)
        w.write(s.cancel ? 1 : 0, 1)
        w.write(0x7F, 7)
        guard !s.cancel else { return }
        w.write(1, 1)  // program_segmentation_flag
        w.write(s.duration != nil ? 1 : 0, 1)
        w.write(UInt64(s.restrictions & 0x3F), 6)
        if let duration = s.duration { w.write(duration & ((1 << 40) - 1), 40) }
        w.write(UInt64(s.upidType), 8)
        w.write(UInt64(s.upid.count), 8)
        w.append(s.upid)
        w.write(UInt64(s.typeID), 8)
        w.write(UInt64(s.segmentNum), 8)
        w.write(UInt64(s.segmentsExpected), 8)
        if let sub = s.subSegment {
            w.write(UInt64(sub.num), 8)
            w.write(UInt64(sub.expected), 8)
        }
    }
}

/// Reads big-endian bit fields.
struct BitReader {
    private let bytes: [UInt8]
    private var bit = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var byteOffset: Int { bit / 8 }
    var bytesLeft: Int { bytes.count - (bit + 7) / 8 }

    mutating func bits(_ count: Int) throws(SCTE35.ParseError) -> UInt64 {
        guard bit + count <= bytes.count * 8 else { throw .truncated }
        var value: UInt64 = 0
        for _ in 0..<count {
            value = value << 1 | UInt64(bytes[bit / 8] >> (7 - bit % 8) & 1)
            bit += 1
        }
        return value
    }

    mutating func skip(_ count: Int) throws(SCTE35.ParseError) {
        guard bit + count <= bytes.count * 8 else { throw .truncated }
        bit += count
    }

    mutating func seek(toByte offset: Int, bit extra: Int = 0) throws(SCTE35.ParseError) {
        guard offset * 8 + extra <= bytes.count * 8 else { throw .truncated }
        bit = offset * 8 + extra
    }

    mutating func bytes(_ count: Int) throws(SCTE35.ParseError) -> [UInt8] {
        guard bit % 8 == 0, count >= 0, byteOffset + count <= bytes.count else { throw .truncated }
        defer { bit += count * 8 }
        return Array(bytes[byteOffset..<(byteOffset + count)])
    }
}

/// Writes big-endian bit fields.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var used = 0  // bits used in the last byte (0: start a new one)

    mutating func write(_ value: UInt64, _ count: Int) {
        for i in stride(from: count - 1, through: 0, by: -1) {
            if used == 0 { bytes.append(0) }
            bytes[bytes.count - 1] |= UInt8((value >> UInt64(i)) & 1) << (7 - used)
            used = (used + 1) % 8
        }
    }

    mutating func append(_ more: [UInt8]) {
        precondition(used == 0, "byte-aligned")
        bytes += more
    }
}
