/// FLV tag type, identical to the RTMP message type id of the same payload.
public enum FLVTagType: UInt8, Sendable {
    case audio = 8
    case video = 9
    case script = 18
}
