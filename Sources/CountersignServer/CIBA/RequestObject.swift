import Foundation

/// A signed authentication request (CIBA §7.1.1): the authentication request parameters as the
/// claims of a JWT the client signed with a key it registered, sent as the form parameter
/// `request`. The signature binds the request to the client beyond its authentication at the
/// endpoint, which is what lets a relying party prove later what it asked for.
///
/// Checked in this order, every failure `invalid_request` (decision 2 of the standards
/// checklist): the client registered keys; a compact JWS signed ES256 or RS256 (never `none`)
/// by one of them; `iss` is the client; `aud` names the issuer; the times of
/// `JWTTimeRules.requestObject` (`exp`, `iat` and `nbf` required, at most 60 minutes from
/// `nbf` to `exp`); a `jti`; a `client_id` claim, if any, names the client; each parameter
/// claim has its type. The `jti` is used up last, once everything else holds.
///
/// Authentication request parameters must not also appear outside the JWT (§7.1.1): one that
/// does is refused rather than silently dropped, so that a client never believes the server
/// read a value it did not. Client authentication parameters stay in the form.
struct RequestObject: Sendable {
    let parameters: AuthenticationParameters
    let jwtID: String
    let expiresAt: Date

    init(_ text: String, client: Client, issuer: String, at now: Date) async throws(RequestObjectError) {
        guard let keys = client.jwks else { throw .noKeys }
        let jwt: ClientSignedJWT
        do {
            jwt = try ClientSignedJWT(parsing: text)
            try await jwt.verify(with: keys)
        } catch ClientJWTError.algorithmRefused(let alg) {
            throw .algorithmRefused(alg)
        } catch ClientJWTError.unknownKey {
            throw .unknownKey
        } catch ClientJWTError.badSignature {
            throw .badSignature
        } catch {
            throw .malformed
        }
        do {
            guard try jwt.claims.requiredString("iss") == client.id else { throw RequestObjectError.wrongIssuer }
            guard try jwt.claims.audience().contains(issuer) else { throw RequestObjectError.wrongAudience(issuer) }
            expiresAt = try JWTTimeRules.requestObject.check(jwt.claims, at: now)
            jwtID = try jwt.claims.requiredString("jti")
            guard jwtID.count <= JWTIDLedger.maximumLength else { throw RequestObjectError.longJWTID }
            if let clientID = try jwt.claims.string("client_id"), clientID != client.id { throw RequestObjectError.wrongClientID }
        } catch let error as JWTClaimError {
            throw .claim(error.description)
        } catch let error as JWTTimeError {
            throw .claim(error.description)
        } catch let error as RequestObjectError {
            throw error
        } catch {
            throw .malformed
        }
        parameters = try AuthenticationParameters(claims: jwt.claims)
    }

    /// The authentication request parameters of `form`: the claims of its signed request when it
    /// sends one, its own parameters when it does not and the client may send them unsigned.
    static func parameters(of form: FormParameters, client: Client, issuer: Issuer, jwtIDs: JWTIDLedger)
        async throws -> AuthenticationParameters {
        guard let text = form["request"] else {
            guard !client.requireSignedRequestObject else { throw RequestObjectError.required }
            return AuthenticationParameters(form: form)
        }
        if let outside = AuthenticationParameters.names.sorted().first(where: { form.contains($0) }) {
            throw RequestObjectError.parameterOutside(outside)
        }
        let object = try await RequestObject(text, client: client, issuer: issuer.identifier, at: jwtIDs.now())
        guard try await jwtIDs.use(
            object.jwtID, clientID: client.id, purpose: .requestObject, expiresAt: object.expiresAt) else {
            throw RequestObjectError.replayed
        }
        return object.parameters
    }
}

/// Why a signed authentication request was refused: always `invalid_request`, as the OpenID
/// conformance suite expects (not `invalid_request_object`).
enum RequestObjectError: OAuthFailure, Equatable {
    case required
    case parameterOutside(String)
    case noKeys
    case malformed
    case algorithmRefused(String)
    case unknownKey
    case badSignature
    case wrongIssuer
    case wrongAudience(String)
    case claim(String)
    case longJWTID
    case wrongClientID
    case claimType(String, String)
    case replayed

    var oauthError: OAuthError {
        OAuthError(.invalidRequest, description)
    }

    private var description: String {
        switch self {
        case .required: "this client must send its authentication request signed, as request"
        case .parameterOutside(let name): "\(name) is sent beside request; with a signed request every authentication parameter goes inside it"
        case .noKeys: "request must be signed with a key the client registered, and the client has registered none (jwks)"
        case .malformed: "request is not a compact JWS with a JSON header and JSON claims"
        case .algorithmRefused(let alg): "request must be signed with ES256 or RS256, not \(alg)"
        case .unknownKey: "request is not signed with a key the client registered (kid, alg)"
        case .badSignature: "request's signature does not verify with the client's key"
        case .wrongIssuer: "request's iss must be the client_id"
        case .wrongAudience(let issuer): "request's aud must name the issuer \(issuer)"
        case .claim(let why): "request\(why)"
        case .longJWTID: "request has a jti longer than \(JWTIDLedger.maximumLength) characters"
        case .wrongClientID: "request's client_id names another client"
        case .claimType(let name, let expected): "request's \(name) must be \(expected)"
        case .replayed: "request was already used (jti)"
        }
    }
}
