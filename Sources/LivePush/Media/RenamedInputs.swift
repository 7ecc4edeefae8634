/// The input protocol's name before every input was an `…Input`.
@available(*, deprecated, renamed: "MediaInput")
public typealias MediaSource = MediaInput

/// The file opener's name before every input was an `…Input`.
@available(*, deprecated, renamed: "MediaInputFactory")
public typealias MediaSourceFactory = MediaInputFactory
