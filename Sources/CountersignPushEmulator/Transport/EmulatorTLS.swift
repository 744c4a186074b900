import NIOSSL

extension EmulatorPKI {
    /// The TLS server configuration presenting this PKI's server certificate; with
    /// `clientCAPath`, a client certificate issued by that CA is required and a handshake
    /// without one fails, as at Apple's certificate-authenticated endpoint.
    func serverTLSConfiguration(requiringClientCertificatesFrom clientCAPath: String? = nil) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(serverCertificatePath)
            key = try NIOSSLPrivateKey(file: serverKeyPath, format: .pem)
        } catch {
            throw EmulatorError.tlsConfiguration("the server certificate or key cannot be loaded: \(error)")
        }
        guard let clientCAPath else {
            return .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        }
        let authorities: [NIOSSLCertificate]
        do {
            authorities = try NIOSSLCertificate.fromPEMFile(clientCAPath)
        } catch {
            throw EmulatorError.tlsConfiguration("the client CA at \(clientCAPath) cannot be loaded: \(error)")
        }
        var configuration = TLSConfiguration.makeServerConfigurationWithMTLS(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key),
            trustRoots: .certificates(authorities))
        // Tells clients which CA to pick a certificate for, as servers asking for one do.
        configuration.sendCANameList = true
        return configuration
    }
}
