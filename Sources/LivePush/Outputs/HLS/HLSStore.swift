/// Where an HLS output's files go: a directory (``HLSFileStore``) or an HTTP origin. Its calls
/// block (a disk, a network), so only the output's writer jobs (``HLSWriter``) and its connects,
/// on worker threads, make them; never a send loop.
protocol HLSStore: Sendable {
    /// Carries out one write: a put replaces the file whole, so that a reader never sees half
    /// of it. Throws `hlsWriteFailed` (or the transport's code) when it could not.
    func perform(_ write: HLSWrite) throws(LivePushError)
    /// Whether the store takes writes at all (a connect): the directory exists and may be written.
    func check() throws(LivePushError)
}
