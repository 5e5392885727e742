import Foundation

extension DumpFixture {
    func slackdump(_ layout: String, in root: URL) throws -> URL {
        throw CocoaError(.featureUnsupported)
    }
}
