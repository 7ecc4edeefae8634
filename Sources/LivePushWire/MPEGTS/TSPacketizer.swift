/// Cuts PES packets and PSI sections into 188-byte transport packets and keeps each PID's
/// continuity counter.
///
/// A PES starts a packet with payload_unit_start_indicator set; its first packet may carry an
/// adaptation field with the PCR and the random access indicator. The last packet of a PES is
/// filled with adaptation-field stuffing (a PES payload may not be padded). A section is
/// preceded by pointer_field 0 and padded with 0xFF after it, which a section may be.
struct TSPacketizer: Sendable {
    static let packetSize = 188
    static let syncByte: UInt8 = 0x47
    private static let payloadCapacity = 184

    /// The counter of the next packet with payload, per PID.
    private var nextContinuity: [UInt16: UInt8] = [:]

    /// The bits the first packet of a PES may carry in its adaptation field.
    struct Signals: Sendable {
        /// PCR time in microseconds.
        var pcr: Int64?
        var randomAccess = false
        /// The time base changed (timestamps jumped back): set on the first PCR after it.
        var discontinuity = false
        var isEmpty: Bool { pcr == nil && !randomAccess && !discontinuity }
    }

    /// Writes a whole PES packet (header and payload) on `pid`.
    mutating func writePES(_ pes: [UInt8], pid: UInt16, signals: Signals = Signals(), into out: inout [UInt8]) {
        out.reserveCapacity(out.count + (pes.count / Self.payloadCapacity + 2) * Self.packetSize)
        var offset = 0
        var first = true
        repeat {
            let fields = first && !signals.isEmpty ? signals : nil
            // Adaptation field size with its length byte: flags byte, plus 6 bytes of PCR.
            var adaptationSize = fields == nil ? 0 : 2 + (fields?.pcr == nil ? 0 : 6)
            let chunk = min(pes.count - offset, Self.payloadCapacity - adaptationSize)
            let stuffing = Self.payloadCapacity - adaptationSize - chunk
            adaptationSize += stuffing
            writeHeader(pid: pid, unitStart: first, adaptation: adaptationSize > 0, payload: true, into: &out)
            if adaptationSize > 0 {
                writeAdaptationField(size: adaptationSize, fields ?? Signals(), into: &out)
            }
            out.append(contentsOf: pes[offset..<(offset + chunk)])
            offset += chunk
            first = false
        } while offset < pes.count
    }

    /// Writes one PSI section (PAT, PMT, splice_info_section...) on `pid`.
    mutating func writeSection(_ section: [UInt8], pid: UInt16, into out: inout [UInt8]) {
        var offset = 0
        var first = true
        repeat {
            writeHeader(pid: pid, unitStart: first, adaptation: false, payload: true, into: &out)
            var room = Self.payloadCapacity
            if first {
                out.append(0x00)  // pointer_field: the section starts right after it
                room -= 1
            }
            let chunk = min(section.count - offset, room)
            out.append(contentsOf: section[offset..<(offset + chunk)])
            out.append(contentsOf: repeatElement(0xFF, count: room - chunk))
            offset += chunk
            first = false
        } while offset < section.count
    }

    /// A packet with an adaptation field only, carrying a PCR: how the PCR keeps its pace
    /// while the PCR PID has nothing to send. Its continuity counter repeats the last one, as
    /// for every packet without payload.
    mutating func writePCROnly(pid: UInt16, pcr: Int64, discontinuity: Bool, into out: inout [UInt8]) {
        writeHeader(pid: pid, unitStart: false, adaptation: true, payload: false, into: &out)
        writeAdaptationField(size: Self.payloadCapacity, Signals(pcr: pcr, discontinuity: discontinuity), into: &out)
    }

    private mutating func writeHeader(pid: UInt16, unitStart: Bool, adaptation: Bool, payload: Bool,
                                      into out: inout [UInt8]) {
        let next = nextContinuity[pid] ?? 0
        let counter = payload ? next : (next &+ 15) & 0x0F
        if payload { nextContinuity[pid] = (next + 1) & 0x0F }
        out.append(Self.syncByte)
        out.append((unitStart ? 0x40 : 0x00) | UInt8((pid >> 8) & 0x1F))
        out.append(UInt8(pid & 0xFF))
        let control: UInt8 = (adaptation ? 0x20 : 0x00) | (payload ? 0x10 : 0x00)
        out.append(control | counter)
    }

    /// An adaptation field of exactly `size` bytes, length byte included, stuffed with 0xFF
    /// after its fields. Size 1 is the length byte alone (one byte of stuffing).
    private func writeAdaptationField(size: Int, _ fields: Signals, into out: inout [UInt8]) {
        out.append(UInt8(size - 1))
        guard size > 1 else { return }
        var flags: UInt8 = 0
        if fields.discontinuity { flags |= 0x80 }
        if fields.randomAccess { flags |= 0x40 }
        if fields.pcr != nil { flags |= 0x10 }
        out.append(flags)
        var used = 2
        if let pcr = fields.pcr {
            let (base, ext) = TSClock.pcr(pcr)
            out.append(UInt8((base >> 25) & 0xFF))
            out.append(UInt8((base >> 17) & 0xFF))
            out.append(UInt8((base >> 9) & 0xFF))
            out.append(UInt8((base >> 1) & 0xFF))
            out.append(UInt8((base & 1) << 7) | 0x7E | UInt8(ext >> 8))  // 6 reserved bits set
            out.append(UInt8(ext & 0xFF))
            used += 6
        }
        out.append(contentsOf: repeatElement(0xFF, count: size - used))
    }
}
