import Foundation
import NIOCore
import NIOHTTPTypes
import Synchronization

/// The connections `serve` holds, by client address, so that no client can hold the server.
///
/// Every connection is admitted here when it opens. Past `perAddress` connections from one address, that address's
/// longest-idle connection is closed to make room; past `total`, the longest-idle connection of any address is. A
/// connection is idle while it has no request read in full and unanswered: one that opened and sent nothing, that
/// waits between keep-alive requests, or that trickles a request in. When every candidate is busy answering a
/// request, the new connection is closed instead. Under pressure (more than half of `total` open), idle connections
/// are also closed after `busyIdleTimeout` instead of the server's idle timeout, until half are open.
///
/// So a new client is admitted at once whatever idle connections others hold: what the old cap did instead (wait in
/// the listen backlog until an idle connection timed out) made every request wait 12–14 s behind 270 idle ones.
final class ConnectionGuard: Sendable {
    private struct Entry {
        let channel: any Channel
        let address: String
        /// Requests read in full and not yet answered.
        var inFlight = 0
        /// When the last request part arrived or the last answer ended (or the connection opened).
        var lastActive: ContinuousClock.Instant
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var perAddress: [String: Int] = [:]
    }

    let total: Int
    let perAddress: Int
    let busyIdleTimeout: Duration
    private let state = Mutex(State())

    init(total: Int, perAddress: Int, busyIdleTimeout: Duration) {
        self.total = max(1, total)
        self.perAddress = max(1, perAddress)
        // Also the period of each connection's check: never a busy loop.
        self.busyIdleTimeout = max(busyIdleTimeout, .milliseconds(100))
    }

    /// Connections open now (admitted and not yet closed or evicted).
    var count: Int { state.withLock { $0.entries.count } }

    /// Admits `channel` from `address`. Returns the connections to close: an idle one it replaces, or `channel`
    /// itself when no idle connection can make room.
    ///
    /// - Complexity: O(n) for the n open connections when a cap is reached, else O(1).
    func admit(_ channel: any Channel, address: String, at now: ContinuousClock.Instant) -> [any Channel] {
        state.withLock { state in
            var closing: [any Channel] = []
            if state.perAddress[address, default: 0] >= perAddress {
                guard let victim = Self.evictLongestIdle(from: address, in: &state) else { return [channel] }
                closing.append(victim)
            }
            if state.entries.count >= total {
                guard let victim = Self.evictLongestIdle(from: nil, in: &state) else { return closing + [channel] }
                closing.append(victim)
            }
            state.entries[ObjectIdentifier(channel)] = Entry(channel: channel, address: address, lastActive: now)
            state.perAddress[address, default: 0] += 1
            return closing
        }
    }

    /// Records a request part read (`requestEnded`: the request is now read in full) or an answer ended.
    func record(_ channel: any Channel, requestEnded: Bool = false, answered: Bool = false, at now: ContinuousClock.Instant) {
        state.withLock { state in
            guard var entry = state.entries[ObjectIdentifier(channel)] else { return }
            if requestEnded { entry.inFlight += 1 }
            if answered { entry.inFlight = max(0, entry.inFlight - 1) }
            entry.lastActive = now
            state.entries[ObjectIdentifier(channel)] = entry
        }
    }

    /// Forgets a closed connection (nothing when it was evicted already).
    func remove(_ channel: any Channel) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: ObjectIdentifier(channel)) else { return }
            Self.release(entry.address, in: &state)
        }
    }

    /// True when `channel` should close now, which it is then taken to be (forgotten at once, so that the
    /// connections checked at the same moment see the count it leaves): the server is under pressure and it has
    /// been idle for `busyIdleTimeout`.
    func closesIfStale(_ channel: any Channel, at now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            let id = ObjectIdentifier(channel)
            guard state.entries.count * 2 > total, let entry = state.entries[id], entry.inFlight == 0,
                entry.lastActive.duration(to: now) >= busyIdleTimeout
            else { return false }
            state.entries[id] = nil
            Self.release(entry.address, in: &state)
            return true
        }
    }

    /// Forgets the idle connection (from `address`, or from anywhere when nil) that has been idle longest, and
    /// returns it for closing; nil when every one is busy.
    private static func evictLongestIdle(from address: String?, in state: inout State) -> (any Channel)? {
        let idle = state.entries.lazy.filter { $0.value.inFlight == 0 && (address == nil || $0.value.address == address) }
        guard let id = idle.min(by: { $0.value.lastActive < $1.value.lastActive })?.key,
            let entry = state.entries.removeValue(forKey: id)
        else { return nil }
        release(entry.address, in: &state)
        return entry.channel
    }

    private static func release(_ address: String, in state: inout State) {
        state.perAddress[address, default: 1] -= 1
        if state.perAddress[address] == 0 { state.perAddress[address] = nil }
    }
}

/// A connection's side of `ConnectionGuard`: admits the connection when it opens, reports its requests and
/// answers, and closes it when the guard finds it stale under pressure (checked every `busyIdleTimeout`).
///
/// One per connection, used on its event loop only (a NIO channel handler).
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connections: ConnectionGuard
    private var admitted = false
    private var check: RepeatedTask?

    init(_ connections: ConnectionGuard) {
        self.connections = connections
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context.channel) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        connections.remove(context.channel)
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        connections.remove(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            connections.record(context.channel, requestEnded: true, at: .now)
        } else {
            connections.record(context.channel, at: .now)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { connections.record(context.channel, answered: true, at: .now) }
        context.write(data, promise: promise)
    }

    private func admit(_ channel: any Channel) {
        guard !admitted else { return }
        admitted = true
        for closing in connections.admit(channel, address: ClientAddress.key(channel.remoteAddress), at: .now) {
            closing.close(promise: nil)
        }
        let connections = connections
        let every = TimeAmount(connections.busyIdleTimeout)
        check = channel.eventLoop.scheduleRepeatedTask(initialDelay: every, delay: every) { _ in
            if connections.closesIfStale(channel, at: .now) { channel.close(promise: nil) }
        }
    }
}

/// A client address as the server's limits count it.
enum ClientAddress {
    /// The address's key: an IPv4 address as written; an IPv6 address by its /64 network (what one client is
    /// usually given), or as IPv4 when it is written in IPv6 (`::ffff:a.b.c.d`); `unknown` without one (tests that
    /// skip the network).
    static func key(_ address: SocketAddress?) -> String {
        guard let text = address?.ipAddress else { return "unknown" }
        guard case .v6 = address else { return text }
        return network64(text) ?? text
    }

    /// `2001:db8:0:1::5` → `2001:db8:0:1::/64`; `::ffff:127.0.0.1` → `127.0.0.1`; nil for text that is not a
    /// written IPv6 address.
    static func network64(_ text: String) -> String? {
        let halves = text.lowercased().components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        let head = halves[0].split(separator: ":").map(String.init)
        let tail = halves.count == 2 ? halves[1].split(separator: ":").map(String.init) : []
        // An IPv4 address written in IPv6 (`::ffff:a.b.c.d`: an IPv4 client of a server on `::`).
        if let last = tail.last ?? head.last, last.contains(".") { return last }
        let missing = 8 - head.count - tail.count
        guard halves.count == 2 ? missing >= 0 : missing == 0 else { return nil }
        let groups = head + Array(repeating: "0", count: missing) + tail
        return groups.prefix(4).map { String(Int($0, radix: 16) ?? 0, radix: 16) }.joined(separator: ":") + "::/64"
    }
}
