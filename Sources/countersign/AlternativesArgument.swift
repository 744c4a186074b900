import CountersignCommandLine
import Foundation

/// `--alternatives CLASS=ALTERNATIVE/ALTERNATIVE…`, each alternative its factors joined by
/// commas: `biometric=biometric/pin,number-match/custom`. The class is its URN or the part
/// after `urn:countersign:acr:`; nothing after `=` takes the class's own alternatives away.
/// The server checks the names; this only splits them.
enum AlternativesArgument {
    static let help = "How users reach a class: CLASS=FACTORS/FACTORS…, factors joined by commas "
        + "(biometric=biometric/pin,number-match/custom); CLASS= removes it; repeat for several classes."

    /// Class URN → alternatives, or nil where the class's alternatives are removed.
    static func parse(_ specs: [String]) throws -> [(urn: String, alternatives: [[String]]?)] {
        try specs.map { spec in
            guard let equals = spec.firstIndex(of: "="), equals != spec.startIndex else {
                throw AdminAPIClient.Failure(description: "--alternatives takes CLASS=FACTORS/FACTORS…, not \(spec)")
            }
            let name = String(spec[..<equals])
            let urn = name.hasPrefix("urn:") ? name : "urn:countersign:acr:" + name
            let rest = spec[spec.index(after: equals)...]
            guard !rest.isEmpty else { return (urn, nil) }
            let alternatives = rest.split(separator: "/", omittingEmptySubsequences: false).map { alternative in
                alternative.split(separator: ",", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: .whitespaces) }
            }
            return (urn, alternatives)
        }
    }

    /// `current` with the classes in `specs` replaced or removed; nil when no class is left.
    static func merged(_ specs: [String], into current: [String: Any]?) throws -> [String: Any]? {
        var policy = current ?? [:]
        for (urn, alternatives) in try parse(specs) { policy[urn] = alternatives }
        return policy.isEmpty ? nil : policy
    }
}
