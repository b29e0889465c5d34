/**
 * The Redis protocol, RESP2 and RESP3, and nothing above it: {@link io.bloomery.server.resp.RespDecoder} turns bytes
 * into {@link io.bloomery.server.resp.RespRequest}s within {@link io.bloomery.server.resp.RespLimits} and the memory
 * {@link io.bloomery.server.resp.QueryMemory} allows, {@link io.bloomery.server.resp.Reply} is a reply and {@link
 * io.bloomery.server.resp.RespEncoder} writes it in the connection's protocol version. Depends on no other package
 * of the server.
 */
package io.bloomery.server.resp;
