// Package websocket serves WebSocket connections (RFC 6455, with permessage-deflate, RFC 7692)
// on dwell's loops. A handler upgrades its request and the connection stays on the request's
// loop, handed over from HTTP (core.Ctx.HandOver): the frames are read, checked and answered
// there, and no goroutine is held for a connection unless the handler keeps one.
//
// # Two styles, one connection
//
// Accept is the sequential style, for code written as gorilla/websocket's is: the handler goes
// on with the connection, reading messages (ReadMessage, NextReader) and writing them
// (WriteMessage, NextWriter) with calls that park only the handler while they wait — for the
// next message, for a slow client to take what was written. A Conn is the loop's; what the
// handler hands to other goroutines is the connection's Remote, whose calls — the same reads
// and writes — are posted to the connection's loop and run there in order, so that no two
// writes ever interleave.
//
// Serve is the event style, for many connections that mostly wait: the handler returns at once,
// and Events' functions run on the loop when a message arrives or the connection closes. A
// connection waiting for its next message then holds its socket and its state — a few hundred
// bytes — and no coroutine, goroutine or buffer. Send queues a message and says whether it was
// queued, queued past the high-water mark (slow down), or dropped by the slow-client policy.
//
// Both styles are the same Conn: the frames, the control frames, the close handshake, the
// pings, the timeouts and the limits are handled alike, and a message can be sent to many
// connections at once, framed (and compressed) once: see PreparedMessage and Group.
//
// # Over HTTP/2
//
// A browser opens its WebSockets on a page's HTTP/2 connection when the server allows it, as
// dwell does by default (RFC 8441's extended CONNECT; core.Options.DisableConnectProtocol): the
// WebSocket is then a stream of that connection. Accept and Serve take it as they take
// HTTP/1.1's upgrade — the same handler, the same route for GET — answer it with 200 instead of
// 101 (with no key to answer: the stream was opened for WebSocket alone), and the connection's
// frames go as the stream's DATA, within its flow-control windows. Everything below holds alike;
// the close of a WebSocket on a stream ends the stream, not the HTTP/2 connection.
//
// # What the protocol asks, and what happens
//
// A refused upgrade is an ordinary HTTP answer with a reason: 405 for a method other than GET,
// 426 (with Sec-WebSocket-Version: 13) for another version or no Upgrade: websocket, 400 for a
// missing Connection: upgrade or a bad Sec-WebSocket-Key, 403 for an origin not allowed
// (same-origin by default, Options.Origins). After the upgrade, a frame that breaks the
// protocol — unmasked, with a reserved bit or opcode, a control frame fragmented or over 125
// bytes, a continuation without a message — closes the connection with 1002; text that is not
// UTF-8, checked as it arrives and refused at the first impossible byte, with 1007; a message
// over Options.MaxMessage with 1009, as is the connection holding the most when the messages
// still arriving on all the connections that share a Budget hold more than it; a message not
// ended within Options.MessageTimeout with 1008. Pings are answered at once (those that come
// together while the client leaves output unread, with one pong, the latest's), pings are sent
// every Options.PingInterval and a connection that does not answer within Options.PongTimeout
// is closed, as is one that sends nothing for Options.IdleTimeout; a close frame is answered
// and the TCP connection closed; a close this side starts waits Options.CloseTimeout for the
// client's. Whatever a client sends, what it makes a connection queue for it stays within the
// server's WriteHighWater and one pong: a connection whose output is over that mark is not
// read until the client has taken half of it.
//
// In the sequential style the request that upgraded lasts as long as its handler reads, so its
// completion hooks (an access log's line) see how the connection ended: no error after a close
// handshake that completed, whoever began it and whatever the code; core.ErrClosed for a client
// gone without a close frame; the *CloseError of a connection failed for the client's frames,
// ErrPongTimeout, or the close the client never answered. (In the event style the request ends
// when Serve's handler returns, at the upgrade.)
package websocket
