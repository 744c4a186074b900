import CountersignCore

/// The authentication context classes (`acr`) Countersign defines: one per device factor. A
/// relying party asks for one with `acr_values`; the ID token's `acr` names the one the answer
/// achieved.
///
/// Every class also proves possession of the enrolled device (its key signs every answer).
struct AuthenticationClass: Sendable, Hashable, CustomStringConvertible {
    static let confirm = AuthenticationClass(factor: .confirm)
    static let numberMatch = AuthenticationClass(factor: .numberMatch)
    static let pin = AuthenticationClass(factor: .pin)
    static let biometric = AuthenticationClass(factor: .biometric)
    static let custom = AuthenticationClass(factor: .custom)

    static let all: [AuthenticationClass] = Factor.allCases.map(AuthenticationClass.init(factor:))
    static let prefix = "urn:countersign:acr:"

    let factor: Factor

    /// `urn:countersign:acr:confirm`, `…:number-match`, `…:pin`, `…:biometric`, `…:custom`.
    var urn: String { Self.prefix + factor.rawValue.replacingOccurrences(of: "_", with: "-") }
    var description: String { urn }

    init(factor: Factor) {
        self.factor = factor
    }

    /// The class a URN names; nil for any other value (requested classes are voluntary).
    init?(urn: String) {
        guard let found = Self.all.first(where: { $0.urn == urn }) else { return nil }
        self = found
    }

    /// Whether an answer of this class meets `floor`: at least as strong.
    func satisfies(_ floor: AuthenticationClass) -> Bool {
        factor.strength >= floor.factor.strength
    }
}

/// Picks the class a request requires, from what the relying party asked and what the tenant
/// and the client set (`AuthenticationPolicy`, `Client.defaultAcr` / `minimumAcr`):
///
/// 1. the floor is the stronger of the tenant's and the client's minimum;
/// 2. the first requested class Countersign knows that meets the floor and that a user can
///    reach (the tenant may switch factors off) wins (`acr_values` is voluntary, OpenID Connect
///    Core §3.1.2.1: unknown values are passed over, not refused);
/// 3. otherwise the client's default, else the tenant's, else `confirm` — raised to the floor
///    when it is weaker, and to the next stronger class when no user can reach it.
struct RequiredClass: Sendable, Equatable {
    let value: AuthenticationClass

    /// `browser`: the request is a hosted sign-in, where a passkey may reach a class the phone
    /// cannot (`AuthenticationPolicy.passkeyReaches`); a CIBA request has the phone alone.
    init(requested: [String]?, client: Client, policy: AuthenticationPolicy, browser: Bool = false) {
        let floors = [policy.minimumAcr, client.minimumAcr].compactMap { $0.flatMap(AuthenticationClass.init(urn:)) }
        let floor = floors.max { $0.factor.strength < $1.factor.strength }
        func meetsFloor(_ candidate: AuthenticationClass) -> Bool { floor.map(candidate.satisfies) ?? true }
        func reachable(_ candidate: AuthenticationClass) -> Bool {
            !policy.alternatives(for: candidate, client: client).isEmpty
                || browser && policy.passkeyReaches(candidate, client: client)
        }
        if let chosen = requested?.lazy.compactMap(AuthenticationClass.init(urn:))
            .first(where: { meetsFloor($0) && reachable($0) }) {
            value = chosen
            return
        }
        let fallback = [client.defaultAcr, policy.defaultAcr].lazy.compactMap { $0.flatMap(AuthenticationClass.init(urn:)) }
            .first ?? .confirm
        let raised = if let floor, !meetsFloor(fallback) { floor } else { fallback }
        value = reachable(raised) ? raised
            : AuthenticationClass.all.filter { $0.satisfies(raised) && reachable($0) }
                .min { $0.factor.strength < $1.factor.strength } ?? raised
    }

    private init(value: AuthenticationClass) {
        self.value = value
    }

    /// This class, or if it is weaker than `floor` (a group's, `AuthenticationPolicy.groupFloor`)
    /// the floor, or failing a way to reach the floor the weakest reachable class that meets it.
    func raised(to floor: AuthenticationClass?, client: Client, policy: AuthenticationPolicy) -> RequiredClass {
        guard let floor, !value.satisfies(floor) else { return self }
        if !policy.alternatives(for: floor, client: client).isEmpty { return RequiredClass(value: floor) }
        return RequiredClass(value: AuthenticationClass.all
            .filter { $0.satisfies(floor) && !policy.alternatives(for: $0, client: client).isEmpty }
            .min { $0.factor.strength < $1.factor.strength } ?? floor)
    }
}
