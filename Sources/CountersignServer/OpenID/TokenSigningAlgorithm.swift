/// What a tenant's ID tokens and access tokens are signed with. ES256 is Countersign's own
/// choice: small keys, small signatures. RS256 is there because OpenID Connect Core §15.1 (ID
/// tokens) and RFC 9068 §2.1 (JWT access tokens) require a provider to offer it, and some
/// relying parties verify nothing else. A client chooses one (`id_token_signed_response_alg`,
/// OpenID Connect Dynamic Client Registration §2) and gets all its tokens signed with it, so
/// that it needs one algorithm only.
public enum TokenSigningAlgorithm: String, Sendable, CaseIterable, Codable {
    case es256 = "ES256"
    case rs256 = "RS256"
}
