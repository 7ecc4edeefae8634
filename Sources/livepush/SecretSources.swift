import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// Where a command takes a secret: an option (`--auth-key KEY`), a file option
/// (`--auth-key-file PATH`) or an environment variable (`LIVEPUSH_AUTH_KEY`). Anyone on the
/// machine can read a process's arguments (`/proc/PID/cmdline`, `ps`), so the file and the
/// environment variable are the ways that keep it out of sight; the option stays for
/// compatibility, and its users are warned.
///
/// Two sources that give different secrets are refused: which one was meant cannot be guessed,
/// and a wrong guess publishes with a secret nobody chose. No message shows a secret.
struct SecretSources {
    /// What the secret is, for messages: "auth key", "publish key".
    var what: String
    var optionName: String
    var fileOptionName: String
    var environmentVariable: String

    /// The option's value.
    var option: String?
    /// The file option's path.
    var file: String?

    /// Whether any source is set (the secret itself is read by ``secret()``).
    var isSet: Bool { option != nil || file != nil || environment?.isEmpty == false }

    /// The environment variable's value (an empty one is none).
    var environment: String? { getenv(environmentVariable).map { String(cString: $0) } }

    /// The secret, nil when no source gives one; a usage error for an empty option, an
    /// unreadable, oversized or empty file, or sources that disagree.
    func secret() throws(ValidationError) -> String? {
        var given: [(source: String, secret: String)] = []
        if let option {
            guard !option.isEmpty else { throw ValidationError("\(optionName) is empty") }
            given.append((optionName, option))
        }
        if let file { given.append((fileOptionName, try read(file))) }
        if let environment, !environment.isEmpty { given.append((environmentVariable, environment)) }
        guard let first = given.first else { return nil }
        if let other = given.dropFirst().first(where: { $0.secret != first.secret }) {
            throw ValidationError("the \(what) is given by both \(first.source) and \(other.source), and they differ: give it one way "
                                  + "(\(environmentVariable) or \(fileOptionName) keep it out of the process list)")
        }
        return first.secret
    }

    /// The warning for a secret given on the command line, nil otherwise.
    var commandLineWarning: String? {
        option == nil ? nil : "livepush: warning: \(optionName) is visible to every user in the process list; "
            + "use \(fileOptionName) or \(environmentVariable)\n"
    }

    /// The first line of a file of at most 4 KiB (a key file, not whatever the path names),
    /// without its line break (an editor's, or `echo`'s).
    private func read(_ path: String) throws(ValidationError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("\(fileOptionName) \(path) cannot be read") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4097)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw ValidationError("\(fileOptionName) \(path) cannot be read") }
        guard count <= 4096 else { throw ValidationError("\(fileOptionName) \(path) is not a key file (over 4 KiB)") }
        let line = buffer.prefix(count).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).first ?? []
        let text = String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        guard !text.isEmpty else { throw ValidationError("\(fileOptionName) \(path) is empty") }
        return text
    }
}
