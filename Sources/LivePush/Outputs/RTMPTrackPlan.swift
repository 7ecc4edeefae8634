import LivePushWire

/// What an RTMP connection sends of its output's video, decided from the server's connect
/// answer (pure; ``RTMPConnection`` follows it, ``PushOutput`` reports its warnings).
///
/// - One video: sent as asked. A codec that needs Enhanced RTMP (`hvc1`, `av01`, `vp09`) that
///   the server did not confirm is sent anyway, with a `codecNotConfirmed` warning: FFmpeg's
///   listener confirms nothing and reads HEVC, nginx-rtmp 1.2 confirms nothing and records no
///   picture of it; only the warning tells them apart for the user. H.264 goes as legacy FLV,
///   which every RTMP server takes: nothing to confirm.
/// - Alternatives (a preference list, `--video-codec hevc,h264`): the first codec the server
///   confirmed (H.264 always counts as confirmed), else the first, with the warning.
/// - A ladder: E-RTMP v2 multitrack, variant `k` on track `k`, when the server's `capsEx` has
///   the multitrack bit; else track 0 only, with a `multitrackNotConfirmed` warning (or, with
///   ``RTMPMultitrack/always``, every track with that warning).
struct RTMPTrackPlan: Sendable, Equatable {
    /// Track `i` carries the output's variant `tracks[i]`; track 0 goes as the stream's own
    /// video, the others as E-RTMP v2 multitrack tracks. Empty for an output without video.
    var tracks: [UInt8]
    /// What the push goes on without, once per connection.
    var warnings: [LivePushError]

    static func make(info: StreamInfo, answer: EnhancedRTMPCapabilities?, multitrack: RTMPMultitrack = .whenAdvertised) -> RTMPTrackPlan {
        // Opus (E-RTMP v2 audio) is sent as asked; a server that did not confirm it is warned of.
        let audioWarnings = info.audio?.codec.enhancedRTMP.flatMap { codec in
            answer?.confirmsAudio(codec.fourCC) == true ? nil
                : LivePushError(.codecNotConfirmed, "the server did not confirm \(codec.fourCC) audio: its connect answer had \(Self.describe(answer)); sent anyway")
        }.map { [$0] } ?? []
        let variants = info.variants.isEmpty ? (info.video.map { [$0] } ?? []) : info.variants
        guard !variants.isEmpty else { return RTMPTrackPlan(tracks: [], warnings: audioWarnings) }
        func confirmed(_ codec: VideoCodec) -> Bool {
            codec.enhancedRTMP.map { answer?.confirmsVideo($0.fourCC) == true } ?? true
        }
        var warnings: [LivePushError] = []
        var tracks: [UInt8]
        if !info.codecPreference.isEmpty {
            let order = info.codecPreference.compactMap { codec in variants.firstIndex { $0.codec == codec } }
            let chosen = order.first { confirmed(variants[$0].codec) } ?? order.first ?? 0
            tracks = [UInt8(chosen)]
        } else if variants.count > 1 && answer?.has(EnhancedRTMPCapabilities.CapsEx.multitrack) != true {
            let top = variants[0]
            if multitrack == .always {
                tracks = Array(0..<UInt8(min(variants.count, Int(UInt8.max))))
                warnings.append(LivePushError(.multitrackNotConfirmed,
                    "a ladder of \(variants.count) renditions; the server's connect answer had \(Self.describe(answer)): sent as \(tracks.count) tracks anyway (--multitrack always)"))
            } else {
                tracks = [0]
                warnings.append(LivePushError(.multitrackNotConfirmed,
                    "a ladder of \(variants.count) renditions; the server's connect answer had \(Self.describe(answer)): only \(top.width)x\(top.height) (track 0) is sent"))
            }
        } else {
            tracks = Array(0..<UInt8(min(variants.count, Int(UInt8.max))))
        }
        var unconfirmed: [String] = []
        for track in tracks {
            if let fourCC = variants[Int(track)].codec.enhancedRTMP?.fourCC, !confirmed(variants[Int(track)].codec),
               !unconfirmed.contains(fourCC) {
                unconfirmed.append(fourCC)
            }
        }
        for fourCC in unconfirmed {
            warnings.append(LivePushError(.codecNotConfirmed,
                "the server did not confirm \(fourCC): its connect answer had \(Self.describe(answer)); sent anyway"))
        }
        return RTMPTrackPlan(tracks: tracks, warnings: warnings + audioWarnings)
    }

    /// The FourCCs the connect command announces for `info`: those its video may be sent in
    /// as E-RTMP tags (`avc1` for the H.264 tracks of a ladder), and its sound's (`Opus`).
    static func announced(_ info: StreamInfo) -> [String] {
        let variants = info.variants.isEmpty ? (info.video.map { [$0] } ?? []) : info.variants
        var list: [String] = []
        for (index, variant) in variants.enumerated() {
            let multitrack = index > 0 && info.codecPreference.isEmpty
            let fourCC = variant.codec.enhancedRTMP?.fourCC ?? (multitrack ? "avc1" : nil)
            if let fourCC, !list.contains(fourCC) { list.append(fourCC) }
        }
        if let audio = info.audio?.codec.enhancedRTMP { list.append(audio.fourCC) }
        return list
    }

    /// What a warning says the server answered.
    private static func describe(_ answer: EnhancedRTMPCapabilities?) -> String {
        guard let answer else { return "no fourCcList, videoFourCcInfoMap or capsEx" }
        let listed = (answer.fourCcList ?? []) + (answer.videoFourCcInfoMap ?? [:]).filter { $0.value != 0 }.keys.sorted()
        let fourCCs = listed.isEmpty ? "no video FourCC" : "video FourCCs " + TerminalText.escape(Array(Set(listed)).sorted().joined(separator: ","))
        return fourCCs + ", capsEx " + (answer.capsEx.map { String($0) } ?? "none")
    }
}
