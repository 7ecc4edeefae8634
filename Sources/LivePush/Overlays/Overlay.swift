/// A graphic drawn over a push's pictures while it is on air: a text, an image (a PNG logo with
/// its transparency) or a clock, at a position, with an optional opacity and fade.
///
/// Overlays are added, changed and removed live (``LivePusher/changeOverlay(_:waitingUpTo:)``,
/// the control API's `/overlays`), or carried by a playout schedule entry
/// (``PlayoutSchedule/Clip/overlays``), shown for that entry only. They are drawn after the
/// video filters, on the pictures the push encodes (not on a copied stream). A text is
/// rendered once per change (FreeType, with a font found through fontconfig); each frame only
/// blends the overlay's rectangle.
public struct Overlay: Sendable, Equatable {
    /// What is drawn.
    public enum Content: Sendable, Equatable {
        /// One line of text, at most ``Overlay/maxTextLength`` characters.
        case text(String)
        /// An image file (PNG with alpha, JPEG...), read when the overlay is added.
        case image(path: String)
        /// A clock, redrawn when its text changes (once a second).
        case clock(ClockStyle)
    }

    /// What a clock shows. Both come from the push's output clock (the time of the picture
    /// drawn on), never from the time a frame happens to be processed.
    public enum ClockStyle: String, Sendable, Equatable, CaseIterable {
        /// The time of day (UTC, `HH:MM:SS`) the picture airs: the push's start plus its media time.
        case wall
        /// The push's media time, `HH:MM:SS` from 0.
        case media
    }

    /// The overlay's name: 1 to ``maxIDLength`` of `A-Z a-z 0-9 _ -`.
    public var id: String
    /// What is drawn.
    public var content: Content
    /// The left edge in picture pixels (rounded down to even, so the overlay lines up with the
    /// chroma samples). Parts outside the picture are clipped.
    public var x: Int
    /// The top edge in picture pixels (rounded down to even).
    public var y: Int
    /// Text and clock: the font's pixel size. Image: its height in pixels (the width follows
    /// its aspect ratio); nil keeps the image's own size.
    public var size: Int?
    /// The text's colour (text and clock).
    public var color: OverlayColor
    /// A box behind the text, `size / 4` wider on each side (text and clock); nil: none.
    public var background: OverlayColor?
    /// 0 (invisible) to 1 (opaque): multiplies the image's own alpha.
    public var opacity: Double
    /// How long the overlay takes to appear, from transparent to ``opacity``.
    public var fadeIn: Duration
    /// How long it takes to disappear once removed (a schedule entry's overlays go with their entry).
    public var fadeOut: Duration

    /// Creates an overlay; ``LivePusher/changeOverlay(_:waitingUpTo:)`` checks it.
    public init(id: String, content: Content, x: Int, y: Int, size: Int? = nil, color: OverlayColor = .white,
                background: OverlayColor? = nil, opacity: Double = 1, fadeIn: Duration = .zero, fadeOut: Duration = .zero) {
        self.id = id
        self.content = content
        self.x = x
        self.y = y
        self.size = size
        self.color = color
        self.background = background
        self.opacity = opacity
        self.fadeIn = fadeIn
        self.fadeOut = fadeOut
    }

    /// Longest id.
    public static let maxIDLength = 64
    /// Longest text, in characters.
    public static let maxTextLength = 256
    /// Font sizes allowed, pixels.
    public static let textSizes = 8...256
    /// Largest image side after scaling, pixels (a 1080p full-frame graphic fits).
    public static let maxImageSide = 2048
    /// Positions allowed, pixels (larger than any picture; off-picture parts are clipped).
    public static let positions = -8192...8192
    /// Longest fade.
    public static let maxFade = Duration.seconds(60)
    /// Most live overlays on one push (the schedule entry's are counted apart, up to
    /// ``maxPerEntry``).
    public static let maxLive = 16
    /// Most overlays one schedule entry carries.
    public static let maxPerEntry = 8

    /// The font size used when none is given (text and clock).
    static let defaultTextSize = 48

    /// Throws `overlayInvalid` naming the first field out of bounds.
    public func validate() throws(LivePushError) {
        func refuse(_ field: String, _ why: String) -> LivePushError {
            LivePushError(.overlayInvalid, "overlay \"\(id.prefix(Self.maxIDLength))\", field \"\(field)\": \(why)")
        }
        guard Self.isValidID(id) else {
            throw refuse("id", "give 1 to \(Self.maxIDLength) characters of A-Z, a-z, 0-9, _ and -")
        }
        switch content {
        case .text(let text):
            guard !text.isEmpty, text.count <= Self.maxTextLength else {
                throw refuse("text", "give 1 to \(Self.maxTextLength) characters")
            }
            guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw refuse("text", "one line, without control characters")
            }
        case .image(let path):
            guard !path.isEmpty else { throw refuse("image", "is empty") }
        case .clock:
            break
        }
        guard Self.positions.contains(x) else { throw refuse("x", "must be within \(Self.positions)") }
        guard Self.positions.contains(y) else { throw refuse("y", "must be within \(Self.positions)") }
        if let size {
            if case .image = content {
                guard (2...Self.maxImageSide).contains(size) else { throw refuse("size", "must be 2 to \(Self.maxImageSide) pixels") }
            } else {
                guard Self.textSizes.contains(size) else { throw refuse("size", "must be \(Self.textSizes) pixels") }
            }
        }
        guard opacity.isFinite, (0...1).contains(opacity) else { throw refuse("opacity", "must be 0 to 1") }
        for (field, fade) in [("fadeIn", fadeIn), ("fadeOut", fadeOut)] where fade < .zero || fade > Self.maxFade {
            throw refuse(field, "must be 0 to \(Self.maxFade.components.seconds) seconds")
        }
    }

    /// Whether `id` is 1 to ``maxIDLength`` of `A-Z a-z 0-9 _ -` (safe in a URL path and a log).
    public static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maxIDLength && id.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D
        }
    }

    /// Fades in µs, for the pure logic.
    var fadeInMicroseconds: Int64 { Self.microseconds(fadeIn) }
    var fadeOutMicroseconds: Int64 { Self.microseconds(fadeOut) }

    private static func microseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }

    /// What the rendered picture depends on (not the position, opacity or fades): a change of
    /// only those reuses the rendering.
    var renderKey: String {
        let look = "\(size ?? 0)|\(color.hex)|\(background?.hex ?? "-")"
        switch content {
        case .text(let text): return "t|\(look)|\(text)"
        case .image(let path): return "i|\(size ?? 0)|\(path)"
        case .clock(let style): return "c|\(look)|\(style.rawValue)"
        }
    }
}
