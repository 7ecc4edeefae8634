/// The Program Specific Information of LivePush's single program: the PAT (program 1 → PMT
/// PID) and the PMT (its elementary streams). Each table is one section ending in its
/// CRC-32/MPEG-2.
enum TSProgramTables {
    static let programNumber: UInt16 = 1
    static let transportStreamID: UInt16 = 1
    static let registrationDescriptorTag: UInt8 = 0x05

    /// One entry of the PMT's elementary stream loop.
    typealias Stream = (type: TSStreamType, pid: UInt16, descriptors: [UInt8])

    /// program_association_section: program 1 on `programMapPID`.
    static func programAssociation(programMapPID: UInt16 = TSPID.programMap) -> [UInt8] {
        var body: [UInt8] = []
        append16(programNumber, to: &body)
        append16(0xE000 | programMapPID, to: &body)  // 3 reserved bits, program_map_PID
        return section(tableID: 0x00, idExtension: transportStreamID, version: 0, body: body)
    }

    /// TS_program_map_section. `programInfo` holds the program's descriptors.
    static func programMap(pcrPID: UInt16, programInfo: [UInt8], streams: [Stream], version: UInt8) -> [UInt8] {
        var body: [UInt8] = []
        append16(0xE000 | pcrPID, to: &body)
        append16(0xF000 | UInt16(programInfo.count), to: &body)  // 4 reserved bits, program_info_length
        body.append(contentsOf: programInfo)
        for stream in streams {
            body.append(stream.type.rawValue)
            append16(0xE000 | stream.pid, to: &body)
            append16(0xF000 | UInt16(stream.descriptors.count), to: &body)
            body.append(contentsOf: stream.descriptors)
        }
        return section(tableID: 0x02, idExtension: programNumber, version: version, body: body)
    }

    /// registration_descriptor: tag 0x05, length 4, format_identifier (SCTE 35 wants "CUEI"
    /// in the program_info of a program that carries cues).
    static func registrationDescriptor(_ formatIdentifier: UInt32) -> [UInt8] {
        [registrationDescriptorTag, 4, UInt8(formatIdentifier >> 24), UInt8((formatIdentifier >> 16) & 0xFF),
         UInt8((formatIdentifier >> 8) & 0xFF), UInt8(formatIdentifier & 0xFF)]
    }

    /// A long-form section: table_id, section_syntax_indicator 1, section_length, the table id
    /// extension, version (current), section 0 of 0, the body, CRC-32.
    private static func section(tableID: UInt8, idExtension: UInt16, version: UInt8, body: [UInt8]) -> [UInt8] {
        let sectionLength = 5 + body.count + 4
        var out: [UInt8] = [tableID]
        out.reserveCapacity(3 + sectionLength)
        append16(0xB000 | UInt16(sectionLength), to: &out)  // syntax 1, '0', 2 reserved bits
        append16(idExtension, to: &out)
        out.append(0xC1 | (version & 0x1F) << 1)  // 2 reserved bits, version_number, current_next_indicator
        out.append(0x00)  // section_number
        out.append(0x00)  // last_section_number
        out.append(contentsOf: body)
        let crc = SCTE35.crc32(out)
        out.append(contentsOf: [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)])
        return out
    }

    private static func append16(_ value: UInt16, to out: inout [UInt8]) {
        out.append(UInt8(value >> 8))
        out.append(UInt8(value & 0xFF))
    }
}
