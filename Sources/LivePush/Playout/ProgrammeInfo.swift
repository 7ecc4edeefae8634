/// What a schedule entry is for a viewer: the programme guide (XMLTV) lists it, and the as-run
/// log names it. All optional; the JSON fields of an entry are `title`, `description`,
/// `category` and `episode`.
public struct ProgrammeInfo: Sendable, Equatable {
    /// The programme's title (an entry without one is listed by its clip's file name).
    public var title: String?
    /// A description of the programme.
    public var description: String?
    /// Its category, e.g. "News" or "Movie".
    public var category: String?
    /// Its episode, as the platform shows it (XMLTV's `onscreen` system), e.g. "S01E04".
    public var episode: String?

    /// Creates the information.
    public init(title: String? = nil, description: String? = nil, category: String? = nil, episode: String? = nil) {
        self.title = title
        self.description = description
        self.category = category
        self.episode = episode
    }

    /// The longest title, category or episode a schedule may give, in characters (an EPG line).
    public static let maxNameLength = 256
    /// The longest description, in characters.
    public static let maxDescriptionLength = 4096

    /// `title`, else the file name of `source` (without its directory), else `source`. A live
    /// feed's URL is shown with its stream key and secrets masked: its last segment is a key.
    func title(for source: String) -> String {
        if let title, !title.isEmpty { return title }
        if source.contains("://") { return Redaction.redactStreamKey(source) }
        let name = source.split(separator: "/").last.map(String.init) ?? source
        return name.isEmpty ? source : name
    }
}
