/// What a trickle-ICE PATCH came to. An endpoint is allowed not to support trickle ICE
/// (RFC 9725 §4.3.1: it answers 405 or 501): then the candidates of the offer are all it
/// gets, and the publisher stops sending PATCHes but goes on publishing. That is no error.
enum WHIPPatchResult: Sendable, Equatable {
    /// 204 (or 200): the endpoint took the candidates.
    case applied
    /// 405 or 501: the endpoint does not do trickle ICE; send no more PATCHes.
    case notSupported
}
