import NIOCore
import NIOPosix

/// The event loops that push connections run on: threads of their own, as many as there are
/// cores, shared by every credential in the process and never shut down.
///
/// An event loop runs one task at a time, and a batch of up to `batchSize` notifications is
/// framed, encrypted and written in one task, and its answers read in a few. On the HTTP
/// server's loops that held every request on the same loop until the batch was out (seconds
/// in a debug build); on loops of their own the kernel shares the cores between the two.
enum PushEventLoops {
    static let group: any EventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
}
