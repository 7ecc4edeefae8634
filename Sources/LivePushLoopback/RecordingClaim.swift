#if canImport(Glibc)
import Glibc
#endif

/// Gives a finished recording its final name without ever replacing a file.
///
/// Stream names are the peer's choice and publish ids are sequential, so any final name can be
/// guessed (an older overlapping publish's `vic-21.flv`; `victim\0` and `victim\u{202E}`, which
/// both become `victim_.flv`). A rename over an existing name would let one publisher replace
/// another's recording, so the name is claimed atomically with `renameat2(RENAME_NOREPLACE)`
/// (or, on a file system without it, `link` then `unlink`), and a name that is taken is passed
/// over for the next candidate.
enum RecordingClaim {
    /// How a claim ended.
    enum Outcome: Equatable {
        /// The part file now has this name.
        case claimed(String)
        /// Every candidate was taken or the move failed; the part file keeps its name.
        case failed(errno: Int32)
    }

    /// Candidates tried after the first, per publish (a name taken 100 times over is an attack
    /// or a mistake; the part file then stays as it is).
    static let maxAttempts = 100

    /// The names to try, in order: `NAME.flv` for the newest publish of its name, then
    /// `NAME-ID.flv`, `NAME-ID-2.flv` and on (an older publish starts at `NAME-ID.flv`).
    static func candidates(for final: String, publishID: Int, isNewest: Bool) -> [String] {
        let base = final.hasSuffix(".flv") ? String(final.dropLast(4)) : final
        let suffixed = (1...maxAttempts).map { attempt in
            "\(base)-\(publishID)" + (attempt == 1 ? "" : "-\(attempt)") + ".flv"
        }
        return isNewest ? [final] + suffixed : suffixed
    }

    /// Moves `partPath` to the first candidate name that does not exist.
    static func claim(_ partPath: String, candidates: [String]) -> Outcome {
        for target in candidates {
            switch moveNoReplace(partPath, target) {
            case 0: return .claimed(target)
            case EEXIST: continue
            case let error: return .failed(errno: error)
            }
        }
        return .failed(errno: EEXIST)
    }

    /// 0 when `from` now is `to`; else the errno (EEXIST: `to` exists and was left alone).
    static func moveNoReplace(_ from: String, _ to: String) -> Int32 {
        if renameat2(AT_FDCWD, from, AT_FDCWD, to, renameNoReplace) == 0 { return 0 }
        let error = errno
        // EINVAL / ENOSYS / EOPNOTSUPP: the file system or kernel has no RENAME_NOREPLACE.
        guard error == EINVAL || error == ENOSYS || error == EOPNOTSUPP else { return error }
        // `link` fails with EEXIST rather than replace; the part's own name then goes.
        guard link(from, to) == 0 else { return errno }
        unlink(from)
        return 0
    }

    /// `RENAME_NOREPLACE` from <linux/fs.h>.
    private static let renameNoReplace: UInt32 = 1
}

/// glibc's `renameat2` (2.28 and later; <stdio.h> declares it only under _GNU_SOURCE, which the
/// Glibc module leaves out).
@_silgen_name("renameat2")
private func renameat2(_ olddirfd: Int32, _ oldpath: UnsafePointer<CChar>, _ newdirfd: Int32,
                       _ newpath: UnsafePointer<CChar>, _ flags: UInt32) -> Int32
