import ArgumentParser
import FoundationEssentials

/// Where `push` takes the private key that signs its URLs: `--auth-key KEY`, `--auth-key-file
/// PATH` or `LIVEPUSH_AUTH_KEY`. Anyone on the machine can read a process's arguments
/// (`/proc/PID/cmdline`, `ps`), so the file and the environment variable are the ways that
/// keep the key out of sight; the option stays for compatibility.
///
/// Two sources that give different keys are refused: which one was meant cannot be guessed,
/// and a wrong guess publishes with a key nobody chose.
struct PushAuthKeySources {
    static let environmentVariable = AuthCommandSupport.keyVariable

    /// `--auth-key`.
    var option: String?
    /// `--auth-key-file`.
    var file: String?
    /// `LIVEPUSH_AUTH_KEY` (an empty one is none).
    var environment: String?

    /// Whether any source is set (the key itself is read by ``key()``).
    var isSet: Bool { option != nil || file != nil || environment?.isEmpty == false }

    /// The key, nil when no source gives one; a usage error for an unreadable or empty file, or
    /// for sources that disagree. No message shows a key.
    func key() throws(ValidationError) -> String? {
        var given: [(source: String, key: String)] = []
        if let option {
            guard !option.isEmpty else { throw ValidationError("--auth-key is empty") }
            given.append(("--auth-key", option))
        }
        if let file { given.append(("--auth-key-file", try Self.read(file))) }
        if let environment, !environment.isEmpty { given.append((Self.environmentVariable, environment)) }
        guard let first = given.first else { return nil }
        if let other = given.dropFirst().first(where: { $0.key != first.key }) {
            throw ValidationError("the auth key is given by both \(first.source) and \(other.source), and they differ: give it one way "
                                  + "(\(Self.environmentVariable) or --auth-key-file keep it out of the process list)")
        }
        return first.key
    }

    /// The file's text without its trailing line break(s) (an editor's, or `echo`'s).
    static func read(_ path: String) throws(ValidationError) -> String {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ValidationError("--auth-key-file \(path) cannot be read")
        }
        var text = String(decoding: data, as: UTF8.self)
        while let last = text.last, last == "\n" || last == "\r" || last == "\r\n" { text.removeLast() }
        guard !text.isEmpty else { throw ValidationError("--auth-key-file \(path) is empty") }
        return text
    }
}
