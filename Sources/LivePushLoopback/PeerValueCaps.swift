import LivePushWire

/// What the receiver keeps of the lists and metadata a peer sends: the connect command's
/// `fourCcList` (Enhanced RTMP) and the properties of `onMetaData`.
///
/// Both end up in every ``PublishSummary``, and summaries outlive their connection, so what a
/// peer sent is cut here, before anything keeps it: a 1,000,000-entry list or a 750,000-property
/// `onMetaData` would otherwise live on in the receiver's memory for every publish that carried it.
/// What was dropped is counted in the summary (``PublishSummary/droppedPeerValues``) and reported
/// once per connection or publish as ``ReceiverLimit/peerValuesTrimmed``.
struct PeerValueCaps: Sendable, Equatable {
    /// FourCCs kept from a `fourCcList` (E-RTMP v2 names about ten codecs).
    var maxFourCCs = 16
    /// Bytes of one FourCC entry: a FourCC is 4; `*` and a few spare bytes pass, longer entries are dropped.
    var maxFourCCBytes = 8
    /// `onMetaData` properties kept.
    var maxMetadataProperties = 64
    /// Bytes of a kept property's key.
    var maxMetadataKeyBytes = 64
    /// Bytes of a kept string value; a longer string, an object or an array is dropped
    /// (a summary is a count of what came, not a copy of it).
    var maxMetadataStringBytes = 256
    /// Bytes of all kept properties together (keys and values).
    var maxMetadataBytes = 4096

    /// A value cut to its cap, with how many entries were dropped to get there.
    struct Trimmed<Value> {
        var kept: Value
        var dropped: Int
    }

    /// The strings of a `fourCcList`, at most ``maxFourCCs`` of them, each at most ``maxFourCCBytes``.
    /// Entries that are no string or too long are dropped, as are those past the cap.
    func fourCcList(_ values: [AMF0Value]) -> Trimmed<[String]> {
        var kept: [String] = []
        for value in values {
            guard kept.count < maxFourCCs else { break }
            guard let string = value.stringValue, string.utf8.count <= maxFourCCBytes else { continue }
            kept.append(string)
        }
        return Trimmed(kept: kept, dropped: values.count - kept.count)
    }

    /// The properties of `onMetaData` with a plain value (a number, a boolean, null or a short string)
    /// and a short key, in order, while they fit ``maxMetadataProperties`` and ``maxMetadataBytes``.
    func metadata(_ properties: [AMF0Property]) -> Trimmed<[AMF0Property]> {
        var kept: [AMF0Property] = []
        var bytes = 0
        for property in properties {
            guard kept.count < maxMetadataProperties else { break }
            guard property.key.utf8.count <= maxMetadataKeyBytes, let size = plainSize(property.value) else { continue }
            let cost = property.key.utf8.count + size
            guard bytes + cost <= maxMetadataBytes else { break }
            bytes += cost
            kept.append(property)
        }
        return Trimmed(kept: kept, dropped: properties.count - kept.count)
    }

    /// The bytes a plain value takes as kept; nil for a value that is not kept.
    private func plainSize(_ value: AMF0Value) -> Int? {
        switch value {
        case .number, .boolean, .date: return 8
        case .null, .undefined: return 1
        case .string(let string):
            return string.utf8.count <= maxMetadataStringBytes ? string.utf8.count : nil
        default: return nil
        }
    }
}
