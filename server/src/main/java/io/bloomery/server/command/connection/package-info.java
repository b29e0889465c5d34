/**
 * Redis's connection commands (PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET, CLIENT), in
 * {@link io.bloomery.server.command.connection.ConnectionCommands}: they change the connection's
 * {@code state.ClientState}, never the keyspace. May use: dispatch ({@code command}), {@code state}, resp.
 */
package io.bloomery.server.command.connection;
