import CountersignCore
import CountersignCBOR
import Foundation

/// The client data a browser (or an SDK authenticator) collects and the authenticator's
/// signature covers through its hash (WebAuthn Level 3 §5.8.1). A relying party parses it from
/// `clientDataJSON`; an authenticator serialises it in the specification's fixed member order
/// (§5.8.1.1), so that clients agree byte for byte on what was hashed.
public struct CollectedClientData: Sendable, Equatable {
    public static let createType = "webauthn.create"
    public static let getType = "webauthn.get"

    public var type: String
    /// The challenge as the client wrote it: base64url of the relying party's bytes.
    public var challenge: String
    public var origin: String
    /// Present and true when the ceremony ran in an iframe of another origin.
    public var crossOrigin: Bool?
    /// The top-level origin when the ceremony ran in an iframe.
    public var topOrigin: String?

    public init(type: String, challenge: [UInt8], origin: String, crossOrigin: Bool? = false, topOrigin: String? = nil) {
        self.type = type
        self.challenge = Base64URLBytes(challenge).base64URL
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
    }

    /// Parses `clientDataJSON`: UTF-8 (a byte order mark is dropped), one JSON object whose
    /// `type`, `challenge` and `origin` are strings, `crossOrigin` a boolean and `topOrigin` a
    /// string when present. Other members are allowed: the specification lets clients add more.
    public init(parsing bytes: [UInt8]) throws(WebAuthnFormatError) {
        var text = bytes[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        guard String(validUTF8: text) != nil,
              let value = try? JSONValue(parsing: Data(text)), case .object(let members) = value
        else { throw .clientDataNotJSON }
        func string(_ name: String) throws(WebAuthnFormatError) -> String {
            guard case .string(let value)? = members[name] else { throw .clientDataMember(name) }
            return value
        }
        type = try string("type")
        challenge = try string("challenge")
        origin = try string("origin")
        switch members["crossOrigin"] {
        case nil: crossOrigin = nil
        case .bool(let value)?: crossOrigin = value
        default: throw .clientDataMember("crossOrigin")
        }
        switch members["topOrigin"] {
        case nil: topOrigin = nil
        case .string(let value)?: topOrigin = value
        default: throw .clientDataMember("topOrigin")
        }
    }

    /// The JSON-compatible serialisation of §5.8.1.1: `type`, `challenge`, `origin`,
    /// `crossOrigin`, then `topOrigin` when present, strings escaped as the specification's
    /// CCDToString does.
    public var serialized: [UInt8] {
        var result = "{\"type\":" + Self.quoted(type)
        result += ",\"challenge\":" + Self.quoted(challenge)
        result += ",\"origin\":" + Self.quoted(origin)
        result += ",\"crossOrigin\":" + ((crossOrigin ?? false) ? "true" : "false")
        if let topOrigin { result += ",\"topOrigin\":" + Self.quoted(topOrigin) }
        result += "}"
        return Array(result.utf8)
    }

    /// CCDToString: `"` and `\` escaped with a backslash, other code points below U+0020 as
    /// `\u` and four lower-case hex digits, everything else as it is.
    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
