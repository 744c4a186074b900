import Hummingbird
import Logging
import NIOCore

/// The request context of every route.
public struct CountersignRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    public init(source: Source) {
        self.coreContext = .init(source: source)
    }
}
