/// A strict CBOR decoder for what WebAuthn hands a relying party: attestation objects, COSE keys
/// and attestation statements.
///
/// Strict because these bytes come from the network and are signed over: indefinite lengths,
/// reserved encodings and duplicate map keys are always refused, and canonical mode also refuses
/// anything but the one CTAP2 canonical spelling of a value, so the bytes a signature covers are
/// the only bytes that decode to the key Countersign stores.
///
/// ```swift
/// let attestation = try CBORDecoder().decode(attestationObjectBytes)
/// let (coseKey, length) = try CBORDecoder(options: .canonical).decodePrefix(authData[offset...])
/// ```
public struct CBORDecoder: Sendable {
    public struct Options: Sendable {
        /// How many arrays, maps and tags may enclose an item. Bounds recursion, and so stack
        /// use, on hostile input; WebAuthn structures nest three or four deep.
        public var maximumDepth: Int
        /// The most bytes one item may span. `decode(_:)` refuses longer input outright;
        /// `decodePrefix(_:)` refuses an item that runs past this many bytes.
        public var maximumInputLength: Int
        /// Require CTAP2 canonical form: shortest integer, length and float encodings, and map
        /// keys sorted by major type, then encoded length, then bytewise.
        public var requireCanonical: Bool

        public init(maximumDepth: Int = 16, maximumInputLength: Int = 65_536, requireCanonical: Bool = false) {
            self.maximumDepth = maximumDepth
            self.maximumInputLength = maximumInputLength
            self.requireCanonical = requireCanonical
        }

        /// Any definite-length encoding, keys in any order.
        public static let `default` = Options()
        /// CTAP2 canonical form only, as authenticators must write credential public keys.
        public static let canonical = Options(requireCanonical: true)
    }

    public var options: Options

    public init(options: Options = .default) {
        self.options = options
    }

    /// The whole input is one item; anything after it is `.trailingBytes`.
    ///
    /// Error offsets count from the first byte of `bytes`, whatever its indices.
    public func decode(_ bytes: some Collection<UInt8>) throws(CBORError) -> CBORValue {
        // Refused before any copy, so an oversized request body costs nothing to turn away.
        guard bytes.count <= options.maximumInputLength else { throw .lengthLimitExceeded(offset: 0) }
        return try withContiguousBytes(bytes) { buffer throws(CBORError) in
            var reader = CBORReader(buffer, options: options)
            let value = try reader.readItem(depth: 0)
            guard reader.position == buffer.count else { throw .trailingBytes(offset: reader.position) }
            return value
        }
    }

    /// One item at the start of `bytes`, and how many bytes it took (authenticator data holds a
    /// COSE key followed by an extensions map).
    ///
    /// Error offsets count from the first byte of `bytes`, whatever its indices.
    public func decodePrefix(_ bytes: some Collection<UInt8>) throws(CBORError) -> (value: CBORValue, length: Int) {
        try withContiguousBytes(bytes) { buffer throws(CBORError) in
            var reader = CBORReader(buffer, options: options)
            let value = try reader.readItem(depth: 0)
            return (value, reader.position)
        }
    }

    /// Runs `body` over the bytes in one contiguous buffer, copying only if `bytes` has none.
    private func withContiguousBytes<Result>(
        _ bytes: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws(CBORError) -> Result
    ) throws(CBORError) -> Result {
        // The standard library's closure is `rethrows`, which would erase the error type; carry
        // it out in a `Swift.Result` instead, made and opened by hand: `Result(catching:)` and
        // `get()` keep the type only in Swift 6's standard library, which iOS 17 does not have.
        func carried(_ buffer: UnsafeBufferPointer<UInt8>) -> Swift.Result<Result, CBORError> {
            do { return .success(try body(buffer)) } catch { return .failure(error) }
        }
        switch bytes.withContiguousStorageIfAvailable(carried) ?? Array(bytes).withUnsafeBufferPointer(carried) {
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }
}
