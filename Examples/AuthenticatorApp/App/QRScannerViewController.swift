import UIKit
import VisionKit

/// The camera, reading the first QR code it sees (VisionKit's data scanner).
enum QRScannerViewController {
    /// The text of the QR code scanned; nil when cancelled or when the phone cannot scan (the
    /// user is told, and can paste the link instead).
    @MainActor static func scan(from host: UIViewController) async -> String? {
        guard DataScannerViewController.isSupported, DataScannerViewController.isAvailable else {
            await host.choose(title: "Can't use the camera",
                              message: "Allow camera access in Settings, or copy the enrollment link and use Paste Link.",
                              actions: ["OK"], cancel: nil)
            return nil
        }
        return await withCheckedContinuation { continuation in
            let scanner = DataScannerViewController(
                recognizedDataTypes: [.barcode(symbologies: [.qr])], qualityLevel: .balanced, isHighlightingEnabled: true)
            let reader = Reader(continuation: continuation)
            scanner.delegate = reader
            scanner.navigationItem.leftBarButtonItem = UIBarButtonItem(systemItem: .cancel, primaryAction: UIAction { _ in
                reader.finish(nil, dismissing: scanner)
            })
            // The reader lives as long as the scanner.
            objc_setAssociatedObject(scanner, &Reader.key, reader, .OBJC_ASSOCIATION_RETAIN)
            host.topmost.present(UINavigationController(rootViewController: scanner), animated: true) {
                try? scanner.startScanning()
            }
        }
    }

    @MainActor private final class Reader: NSObject, DataScannerViewControllerDelegate {
        static var key: UInt8 = 0
        private var continuation: CheckedContinuation<String?, Never>?

        init(continuation: CheckedContinuation<String?, Never>) {
            self.continuation = continuation
        }

        func dataScanner(_ scanner: DataScannerViewController, didAdd items: [RecognizedItem], allItems: [RecognizedItem]) {
            for case .barcode(let code) in items {
                if let text = code.payloadStringValue {
                    finish(text, dismissing: scanner)
                    return
                }
            }
        }

        func finish(_ text: String?, dismissing scanner: DataScannerViewController) {
            scanner.stopScanning()
            scanner.dismiss(animated: true)
            continuation?.resume(returning: text)
            continuation = nil
        }
    }
}
