import CFreeType
#if canImport(Glibc)
import Glibc
#endif

/// The font text overlays are drawn with: found once through fontconfig (a sans-serif, which on
/// Debian is DejaVu Sans from fonts-dejavu-core) and kept as bytes, so that rendering a text
/// (a clock each second, on the producer's thread) never opens a file.
enum FontFace {
    /// Largest font file read (DejaVu Sans is 740 kB; a CJK font can be 20 MB).
    static let maxFontBytes = 32 << 20

    /// The font file and its bytes, or why there is none. Looked up once per process: fontconfig
    /// scans the system's fonts the first time.
    static let shared: Result<(path: String, bytes: [UInt8]), LivePushError> = load()

    private static func load() -> Result<(path: String, bytes: [UInt8]), LivePushError> {
        guard let path = locate(family: "sans-serif") else {
            return .failure(LivePushError(.fontUnavailable, "fontconfig matched no font for sans-serif"))
        }
        // Read to the file's size: `LocalFile.read` allocates its whole limit, and the font is kept.
        var info = stat()
        guard stat(path, &info) == 0, info.st_size > 0, info.st_size <= maxFontBytes,
              let contents = LocalFile.read(path, upTo: Int(info.st_size)), contents.count == Int(info.st_size) else {
            return .failure(LivePushError(.fontUnavailable, "\(path) cannot be read or is larger than \(maxFontBytes) bytes"))
        }
        return .success((path, Array(contents)))
    }

    /// The file fontconfig picks for `family` (the same as `fc-match family`), regular weight.
    static func locate(family: String) -> String? {
        guard let config = FcInitLoadConfigAndFonts() else { return nil }
        defer { FcConfigDestroy(config) }
        guard let pattern = family.withCString({ FcNameParse(UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self)) }) else { return nil }
        defer { FcPatternDestroy(pattern) }
        FcConfigSubstitute(config, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        var result = FcResultNoMatch
        guard let match = FcFontMatch(config, pattern, &result) else { return nil }
        defer { FcPatternDestroy(match) }
        var file: UnsafeMutablePointer<FcChar8>?
        guard FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch, let file else { return nil }
        return String(cString: UnsafeRawPointer(file).assumingMemoryBound(to: CChar.self))
    }
}
