import ArgumentParser
import LivePush

/// `--video-codec`'s value: one choice (`hevc`, `copy`), or codecs in order of preference
/// (`hevc,h264`), of which each RTMP output sends the first its server confirms
/// (``PushConfig/videoCodecPreference``).
struct VideoCodecList: ExpressibleByArgument {
    let choices: [VideoCodecChoice]

    init?(argument: String) {
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var choices: [VideoCodecChoice] = []
        for part in parts {
            guard let choice = VideoCodecChoice(argument: part), !choices.contains(choice) else { return nil }
            choices.append(choice)
        }
        // A list names codecs to encode to or copy; "copy" is no codec to prefer.
        guard !choices.isEmpty, choices.count == 1 || !choices.contains(.copy) else { return nil }
        self.choices = choices
    }

    /// Sets the push's codec, or its preference list: the push's own video then goes as the
    /// source is (copied when its codec is in the list; H.264 when it must be encoded).
    func apply(to config: inout PushConfig) {
        guard choices.count > 1 else {
            if let choice = choices.first { config.media.videoCodec = choice }
            return
        }
        config.videoCodecPreference = choices.compactMap { if case .encode(let codec) = $0 { codec } else { nil } }
        config.media.videoCodec = .copy
    }
}
