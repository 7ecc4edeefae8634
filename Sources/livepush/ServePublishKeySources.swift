import ArgumentParser
import LivePushLoopback
#if canImport(Glibc)
import Glibc
#endif

/// Where `serve` takes the secret every publish must carry: `--publish-key KEY`,
/// `--publish-key-file PATH` or `LIVEPUSH_PUBLISH_KEY`. Anyone on the machine can read a
/// process's arguments (`ps`), so the file and the environment variable keep the key out of sight.
///
/// Two sources that give different keys are refused (which one was meant cannot be guessed),
/// as `push` does with its auth key.
struct ServePublishKeySources {
    static let environmentVariable = "LIVEPUSH_PUBLISH_KEY"

    /// `--publish-key`.
    var option: String?
    /// `--publish-key-file`.
    var file: String?
    /// `LIVEPUSH_PUBLISH_KEY` (an empty one is none).
    var environment: String?

    /// The key, nil when no source gives one; a usage error for an unreadable file, a key with
    /// characters a URL would encode, or sources that disagree. No message shows a key.
    func key() throws(ValidationError) -> PublishKey? {
        var given: [(source: String, key: String)] = []
        if let option { given.append(("--publish-key", option)) }
        if let file { given.append(("--publish-key-file", try Self.readFirstLine(file))) }
        if let environment, !environment.isEmpty { given.append((Self.environmentVariable, environment)) }
        guard let first = given.first else { return nil }
        if let other = given.dropFirst().first(where: { $0.key != first.key }) {
            throw ValidationError("the publish key is given by both \(first.source) and \(other.source), and they differ: give it one way "
                                  + "(\(Self.environmentVariable) or --publish-key-file keep it out of the process list)")
        }
        guard let key = PublishKey(first.key) else {
            throw ValidationError("the publish key (\(first.source)) must be letters, digits, '-', '.', '_' or '~', and not empty")
        }
        return key
    }

    /// The first line of a file of at most 4 KiB (a key file, not whatever the path names), without
    /// its line break.
    static func readFirstLine(_ path: String) throws(ValidationError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("--publish-key-file \(path) cannot be read") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4097)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count >= 0, count <= 4096 else { throw ValidationError("--publish-key-file \(path) is not a key file (over 4 KiB)") }
        let line = buffer.prefix(count).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).first ?? []
        return String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
    }
}
