import CountersignCore

/// One RFC 9396 authorization detail as the terminal shows it: a headline, then every field,
/// flattened to `path: value`, so that nothing the device signs goes unseen.
///
/// A payment (`instructedAmount` with `amount` and `currency`) is headed by its amount and
/// payee, the two things PSD2 dynamic linking binds:
///
/// ```
/// payment_initiation: 123.50 EUR to Merchant A / DE02100100109307118603
///   creditorAccount.iban: DE02100100109307118603
///   …
/// ```
struct AuthorizationDetailSummary {
    let detail: JSONValue

    init(_ detail: JSONValue) {
        self.detail = detail
    }

    var lines: [String] {
        let type = detail["type"]?.stringValue ?? "?"
        var fields: [(String, String)] = []
        if case .object(let members) = detail {
            for name in members.keys.sorted() where name != "type" {
                Self.flatten(members[name]!, path: name, into: &fields)
            }
        }
        return [headline.map { "\(type): \($0)" } ?? type] + fields.map { "  \($0.0): \($0.1)" }
    }

    /// "<amount> <currency> to <creditor> / <account>", as far as the detail has them.
    private var headline: String? {
        guard let amount = detail["instructedAmount"]?["amount"]?.stringValue else { return nil }
        var text = amount
        if let currency = detail["instructedAmount"]?["currency"]?.stringValue { text += " \(currency)" }
        let payee = [detail["creditorName"]?.stringValue, detail["creditorAccount"]?["iban"]?.stringValue].compactMap { $0 }
        if !payee.isEmpty { text += " to " + payee.joined(separator: " / ") }
        return text
    }

    private static func flatten(_ value: JSONValue, path: String, into fields: inout [(String, String)]) {
        switch value {
        case .object(let members):
            for name in members.keys.sorted() { flatten(members[name]!, path: "\(path).\(name)", into: &fields) }
        case .array(let items) where items.allSatisfy({ $0.stringValue != nil }):
            fields.append((path, items.compactMap(\.stringValue).joined(separator: ", ")))
        case .string(let text):
            fields.append((path, text))
        default:
            fields.append((path, value.canonicalString))
        }
    }
}
