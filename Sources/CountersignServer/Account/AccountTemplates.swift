/// The account pages' templates, styles and scripts, merged into `PageTemplates` and
/// `PageAssets`.
enum AccountTemplates {
    static let all: [String: String] = [:]
    static let stylesheet = ""
    static let scripts: [String: (type: String, body: String)] = [:]
}
