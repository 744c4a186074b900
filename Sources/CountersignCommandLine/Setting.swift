import Foundation

/// A flag's value, else the environment variable's, else nil.
package func setting(_ flag: String?, _ environmentVariable: String) -> String? {
    if let flag, !flag.isEmpty { return flag }
    if let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty { return value }
    return nil
}
