// The store's public types (`Archive`, `Message`, `Conversation`, …) are part of this library's API: one
// `import SlackIndex` gives a library user everything.
@_exported import SlackIndexStore
