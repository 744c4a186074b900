import Foundation

/// Base64url without padding (RFC 4648 §5), the encoding JOSE and the device protocol use.
extension Data {
    /// Decodes unpadded base64url; returns nil for any character outside the alphabet or a bad length.
    public init?(base64URLEncoded string: some StringProtocol) {
        var text = String(string)
        guard !text.contains("="), !text.contains("+"), !text.contains("/") else { return nil }
        text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        switch text.count % 4 {
        case 0: break
        case 2: text += "=="
        case 3: text += "="
        default: return nil
        }
        self.init(base64Encoded: text)
    }

    /// This data as unpadded base64url.
    public var base64URLEncodedString: String {
        base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
