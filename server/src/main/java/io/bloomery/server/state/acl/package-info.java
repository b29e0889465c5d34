/**
 * ACL users and permissions as Redis 8 defines them: {@link io.bloomery.server.state.acl.Acl} (the users, the
 * permission check, the ACL log, the ACL file), {@link io.bloomery.server.state.acl.AclUser} (flags, SHA-256
 * password hashes, selectors), {@code Selector} (allowed commands and categories, key and channel patterns, in
 * Redis's rule language) and {@link io.bloomery.server.state.acl.AclCommands} (each command's ACL categories and key
 * access, Redis's where Redis has the command). May use: keyspace ({@code Glob}); never dispatch or a family.
 */
package io.bloomery.server.state.acl;
