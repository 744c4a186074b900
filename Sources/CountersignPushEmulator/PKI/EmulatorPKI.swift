import Foundation

/// A throw-away certificate authority and the TLS server certificate the emulators present.
///
/// Push senders verify the server the way they verify Apple and Google: against a trusted CA,
/// with hostname checking. Tests pass `caCertificatePath` to the sender as its only trust root,
/// so a sender that skips verification, or trusts the system store, is noticed.
///
/// ```swift
/// let pki = try EmulatorPKI.make(in: scratchDirectory)
/// let apns = try await APNsEmulator.start(pki: pki, authentication: .token([key]))
/// // the sender trusts pki.caCertificatePath and connects to apns.baseURL
/// ```
public struct EmulatorPKI: Sendable {
    /// Whether the `openssl` command is available; without it nothing here can be made, and
    /// tests skip with a message that says so.
    public static var isAvailable: Bool { OpenSSLCommand.executable != nil }

    /// The directory holding every file below.
    public let directory: URL
    /// The CA certificate (PEM), the one trust root a sender needs.
    public let caCertificatePath: String
    /// The server's leaf certificate (PEM) for `DNS:localhost` and `IP:127.0.0.1`.
    public let serverCertificatePath: String
    /// The server's P-256 private key (PEM, PKCS#8).
    public let serverKeyPath: String
    /// The CA's private key (PEM); it signs the client certificates.
    let caKeyPath: String

    /// Makes a fresh CA (P-256) and a server certificate for `DNS:localhost` and `IP:127.0.0.1`
    /// signed by it, in `directory` (created if missing).
    ///
    /// Both are valid from a day ago, so that a clock a little behind ours still accepts them,
    /// for thirty days.
    public static func make(in directory: URL) throws -> EmulatorPKI {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw EmulatorError.file(path: directory.path, reason: "cannot be created (\(error.localizedDescription))")
        }
        let pki = EmulatorPKI(directory: directory)
        try OpenSSLCommand.run(CertificateRecipe.p256KeyArguments(output: pki.caKeyPath), in: directory)
        try OpenSSLCommand.run([
            "req", "-x509", "-new", "-sha256", "-key", pki.caKeyPath, "-days", "30",
            "-subj", "/O=Countersign/CN=Countersign Push Emulator CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            "-out", pki.caCertificatePath,
        ], in: directory)

        try OpenSSLCommand.run(CertificateRecipe.p256KeyArguments(output: pki.serverKeyPath), in: directory)
        let request = directory.appendingPathComponent("server.csr").path
        try OpenSSLCommand.run(
            ["req", "-new", "-key", pki.serverKeyPath, "-subj", "/CN=localhost", "-out", request], in: directory)
        let extensions = directory.appendingPathComponent("server.ext")
        try CertificateRecipe.write(CertificateRecipe.serverExtensions, to: extensions)
        try pki.issue(request: request, certificate: pki.serverCertificatePath,
                      validity: CertificateRecipe.Validity.current(days: 30), extensionsFile: extensions.path,
                      extensionsSection: "server_certificate")
        return pki
    }

    private init(directory: URL) {
        self.directory = directory
        caCertificatePath = directory.appendingPathComponent("ca.pem").path
        caKeyPath = directory.appendingPathComponent("ca.key").path
        serverCertificatePath = directory.appendingPathComponent("server.pem").path
        serverKeyPath = directory.appendingPathComponent("server.key").path
    }

    /// Signs the certificate request at `request` with this CA, through `openssl ca` so that
    /// both validity dates can be chosen (OpenSSL 3.0's `x509 -req` cannot set `notBefore`).
    ///
    /// Each call works in a directory of its own, so that concurrent calls never share the
    /// `openssl ca` database files.
    func issue(request: String, certificate: String, validity: CertificateRecipe.Validity,
               extensionsFile: String, extensionsSection: String) throws {
        let workspace = directory.appendingPathComponent("ca-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(
                at: workspace.appendingPathComponent("issued"), withIntermediateDirectories: true)
        } catch {
            throw EmulatorError.file(path: workspace.path, reason: "cannot be created (\(error.localizedDescription))")
        }
        defer { try? FileManager.default.removeItem(at: workspace) }
        let configuration = workspace.appendingPathComponent("ca.cnf")
        try CertificateRecipe.write("", to: workspace.appendingPathComponent("index.txt"))
        try CertificateRecipe.write(CertificateRecipe.authorityConfiguration(workspace: workspace.path), to: configuration)
        try OpenSSLCommand.run([
            "ca", "-batch", "-notext", "-preserveDN", "-rand_serial", "-utf8",
            "-config", configuration.path,
            "-cert", caCertificatePath, "-keyfile", caKeyPath,
            "-startdate", validity.notBefore, "-enddate", validity.notAfter,
            "-extfile", extensionsFile, "-extensions", extensionsSection,
            "-in", request, "-out", certificate,
        ], in: workspace)
    }
}
