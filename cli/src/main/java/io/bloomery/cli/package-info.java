/**
 * The {@code bloomery} command line: {@link io.bloomery.cli.BloomeryCommand} is the entry point, one
 * class per subcommand (plan, build, query, info, merge, demo). Commands hold no logic a library user
 * would also need: sizing, hashing, filters and the file format come from {@code bloomery-core}.
 */
package io.bloomery.cli;
