package io.bloomery.cli;

import io.bloomery.server.ConfigTemplate;
import io.bloomery.server.Main;
import io.bloomery.server.ServerConfig;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code bloomery serve}: the RESP server (RedisBloom's BF/CF/CMS/TOPK commands for any Redis client), with
 * redis-server's option names; everything after {@code serve} goes to {@link Main}.
 */
@Command(
    name = "serve",
    versionProvider = BloomeryCommand.Version.class,
    customSynopsis = "bloomery serve [CONFIG-FILE] [--NAME VALUE]... [--verbose] | --help | --version",
    header = "Serve filters over RESP2/RESP3 to any Redis client (default 127.0.0.1:6380).",
    description = {
      "Options use redis-server's names: --port, --bind, --dir, --appendonly yes|no,",
      "--appendfsync always|everysec|no, --requirepass, --maxmemory, --maxclients,",
      "--timeout, --protected-mode, plus --http-port for the dashboard, /metrics and /health (9180).",
      "Guarded sets (GUARD.*): --store NAME=URL (JDBC PostgreSQL or sqlite:FILE, repeatable),",
      "--store-table NAME=TABLE.COLUMN (someone else's table, read-only), --guard-timeout MS.",
      "A config file with the same names may come first; BLOOMERY_* variables too (see below).",
      "--verbose logs per-client events and the stack traces of unexpected errors.",
      "Connect with: redis-cli -p 6380. Ctrl-C or SIGTERM stops it cleanly (exit 0).",
      "--help (-h) lists every option with its default; --version (-V) prints the version."
    })
final class ServeCommand implements Callable<Integer> {
  /**
   * The server's arguments when {@code args} start the server and nothing else ({@code serve} first, no help,
   * version or {@code --verbose}): {@link BloomeryCommand#main} then hands them to {@link Main} without building
   * the command tree, whose reflection over every command's annotations would cost the server's start more than
   * the server's own setup. Null otherwise, and for arguments the server's parser cannot split, so that the usual
   * path reports them.
   */
  static String[] direct(String[] args) {
    if (args.length == 0 || !args[0].equals("serve")) {
      return null;
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    if (Arrays.asList(rest).contains("--verbose")) {
      return null;
    }
    try {
      return ServerConfig.request(rest) == null ? rest : null;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * The usage's footer (for {@code serve --help} and {@code bloomery help serve}): every option of the server's
   * option table with its default and what it does, and where options come from, in picocli's format syntax.
   */
  static String[] optionsHelp() {
    List<String> lines = new ArrayList<>(List.of("",
        "Every option, as --NAME VALUE (or --NAME=VALUE), as a NAME VALUE line in the config file, or as",
        "BLOOMERY_NAME (upper case, '-' as '_'). A flag wins over the environment, which wins over the file,",
        "which wins over the default (shown after the name; none where empty):"));
    for (Map.Entry<String, String> option : ServerConfig.defaults().entrySet()) {
      lines.add("  --" + option.getKey() + (option.getValue().isEmpty() ? "" : " " + option.getValue()));
      for (String line : ConfigTemplate.description(option.getKey())) {
        lines.add("        " + line);
      }
    }
    return lines.stream().map(l -> l.replace("%", "%%")).toArray(String[]::new);
  }

  @Spec CommandSpec spec;
  @ParentCommand BloomeryCommand root;

  @Unmatched List<String> args = new ArrayList<>();

  /**
   * Prints the usage and every option for {@code --help} or {@code -h}, the version for {@code --version} or
   * {@code -V} (where an option may stand, not as an option's value), else runs the server; {@code --verbose} is {@code --loglevel verbose} (given after the server's own options, so it
   * wins) with stack traces in the log.
   */
  @Override
  public Integer call() {
    ServerConfig.Request request;
    try {
      request = ServerConfig.request(args.toArray(String[]::new));
    } catch (IllegalArgumentException e) {
      request = null; // the server's own parse reports it, as for any bad option
    }
    PrintWriter out = spec.commandLine().getOut();
    if (request == ServerConfig.Request.VERSION) {
      spec.commandLine().printVersionHelp(out);
      out.flush();
      return BloomeryCommand.EXIT_OK;
    }
    if (request == ServerConfig.Request.HELP) {
      spec.commandLine().usage(out);
      out.flush();
      return BloomeryCommand.EXIT_OK;
    }
    List<String> serverArgs = new ArrayList<>(args);
    if (root.verbose()) {
      LogRedaction.configure(true);
      serverArgs.addAll(List.of("--loglevel", "verbose"));
    }
    return Main.run(serverArgs.toArray(String[]::new), spec.commandLine().getOut(), spec.commandLine().getErr());
  }
}
