/// The three bytes of an H.264 stream's profile and level (SPS bytes 1 to 3, which an avcC
/// repeats at bytes 1 to 3, and SDP's `profile-level-id` writes in hex): what a WebRTC peer
/// negotiates on.
struct H264ProfileLevel: Sendable, Equatable, CustomStringConvertible {
    /// profile_idc: 66 Baseline, 77 Main, 88 Extended, 100 High, ...
    var profileIDC: UInt8
    /// constraint_set0_flag (0x80) to constraint_set5_flag (0x04).
    var constraints: UInt8
    /// level_idc (31: level 3.1).
    var levelIDC: UInt8

    /// From an AVCDecoderConfigurationRecord; nil when it is not one.
    init?(avcC record: [UInt8]) {
        guard record.count >= 4, record[0] == 1 else { return nil }
        self.init(profileIDC: record[1], constraints: record[2], levelIDC: record[3])
    }

    init(profileIDC: UInt8, constraints: UInt8, levelIDC: UInt8) {
        self.profileIDC = profileIDC
        self.constraints = constraints
        self.levelIDC = levelIDC
    }

    /// Whether a Constrained Baseline decoder takes the stream: RFC 6184's table of
    /// `profile-level-id`s (section 8.1): Baseline with constraint_set1, Main with constraint_set0,
    /// Extended with constraint_set0 and constraint_set1 (42e0xx, 42c0xx, 4d80xx, 58c0xx ...).
    /// It is the one H.264 profile every WebRTC endpoint must decode (RFC 7742, section 6.2).
    var isConstrainedBaseline: Bool {
        switch profileIDC {
        case 66: constraints & 0x40 != 0
        case 77: constraints & 0x80 != 0
        case 88: constraints & 0xC0 == 0xC0
        default: false
        }
    }

    /// As SDP writes it: `42e01f`.
    var description: String {
        [profileIDC, constraints, levelIDC].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
