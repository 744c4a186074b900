import Foundation

extension EmulatorPKI {
    /// A client certificate signed by this CA, exported as PKCS#12 the way Keychain Access
    /// exports an APNs certificate: what an operator uploads for certificate-based APNs.
    ///
    /// The subject is `UID=<topic>, CN=<commonName>` (Apple puts the bundle id in `UID`), or
    /// just `CN` when `topic` is nil. The key is RSA 2048, as in Apple's push certificates.
    ///
    /// - Parameters:
    ///   - expired: when true the certificate was valid from ten days ago to yesterday, so that
    ///     a sender's expiry check (and the TLS handshake) can be tested.
    ///   - includeKey: when false the bundle holds the certificate alone (`-nokeys`): the
    ///     common mistake of exporting a certificate without its private key.
    ///
    /// ```swift
    /// let bundle = try pki.clientPKCS12(commonName: "Apple Push Services: com.example.app",
    ///                                   topic: "com.example.app", password: "secret")
    /// ```
    public func clientPKCS12(commonName: String, topic: String?, password: String,
                             expired: Bool = false, includeKey: Bool = true) throws -> Data {
        let workspace = directory.appendingPathComponent("client-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
        } catch {
            throw EmulatorError.file(path: workspace.path, reason: "cannot be created (\(error.localizedDescription))")
        }
        // The private key must not outlive the bundle that carries it.
        defer { try? FileManager.default.removeItem(at: workspace) }
        let key = workspace.appendingPathComponent("client.key").path
        let request = workspace.appendingPathComponent("client.csr").path
        let certificate = workspace.appendingPathComponent("client.pem").path
        let extensions = workspace.appendingPathComponent("client.ext")
        let bundle = workspace.appendingPathComponent("client.p12")

        var subject: [(name: String, value: String)] = []
        if let topic { subject.append(("UID", topic)) }
        subject.append(("CN", commonName))
        try OpenSSLCommand.run(CertificateRecipe.rsaKeyArguments(output: key), in: workspace)
        try OpenSSLCommand.run(
            ["req", "-new", "-utf8", "-key", key, "-subj", CertificateRecipe.subject(subject), "-out", request],
            in: workspace)
        try CertificateRecipe.write(CertificateRecipe.clientExtensions, to: extensions)
        try issue(request: request, certificate: certificate,
                  validity: expired ? .expired : .current(days: 365),
                  extensionsFile: extensions.path, extensionsSection: "client_certificate")

        var export = ["pkcs12", "-export", "-in", certificate, "-name", commonName,
                      "-passout", "env:COUNTERSIGN_EMULATOR_PKCS12_PASSWORD", "-out", bundle.path]
        export += includeKey ? ["-inkey", key] : ["-nokeys"]
        try OpenSSLCommand.run(export, in: workspace, secrets: ["COUNTERSIGN_EMULATOR_PKCS12_PASSWORD": password])
        do {
            return try Data(contentsOf: bundle)
        } catch {
            throw EmulatorError.file(path: bundle.path, reason: "cannot be read (\(error.localizedDescription))")
        }
    }
}
