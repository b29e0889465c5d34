package io.bloomery.server.command;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.CommandFamilies;
import io.bloomery.server.keyspace.Keyspace;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.resp.RespEncoder;
import io.bloomery.server.state.ClientState;
import io.bloomery.server.state.ServerContext;
import io.bloomery.server.state.Settings;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The command layer fed random commands built from every command name and hostile arguments (numbers at the
 * int64 edges, NaN, empty strings, option words): every command answers a well-formed reply in both protocols,
 * and none fails with an internal error (an uncaught exception in a handler).
 */
class CommandFuzzTest {
  private static final List<String> WORDS = List.of("", "0", "1", "-1", "2", "3", "100", "0.01", "1e-300", "nan",
      "inf", "-inf", "9223372036854775807", "-9223372036854775808", "18446744073709551616", "0x10", "abc",
      "NONSCALING", "EXPANSION", "CAPACITY", "ERROR", "ITEMS", "NOCREATE", "BUCKETSIZE", "MAXITERATIONS",
      "WEIGHTS", "WITHCOUNT", "COUNTERBITS", "GENERATIONS", "MATCH", "COUNT", "TYPE", "COMPRESSION", "OVERRIDE", "*",
      "k1", "k2", "k3",
      "\u0000\r\n", "4294967296", "65536", "32769", "1073741825");

  @Provide
  Arbitrary<List<List<String>>> scripts() {
    Dispatcher names = CommandFamilies.dispatcher(new ServerContext(new Keyspace(System::currentTimeMillis), new Settings()));
    List<String> commands = new ArrayList<>();
    for (CommandSpec spec : names.table().all()) {
      // MIGRATE would connect to the hosts its random arguments name; MigrateTest covers its arguments
      if (!spec.name().equals("debug") && !spec.name().equals("quit") && !spec.name().equals("migrate")) {
        commands.add(spec.name());
      }
    }
    Arbitrary<String> name = Arbitraries.of(commands);
    Arbitrary<String> key = Arbitraries.of("k1", "k2", "k3");
    Arbitrary<List<String>> rest = Arbitraries.of(WORDS).list().ofMaxSize(8);
    Arbitrary<List<String>> command = Combinators.combine(name, key, rest).as((n, k, r) -> {
      List<String> argv = new ArrayList<>();
      argv.add(n);
      argv.add(k);
      argv.addAll(r);
      return argv;
    });
    return command.list().ofMinSize(1).ofMaxSize(30);
  }

  @Property(tries = 300)
  void everyCommandAnswersAWellFormedReply(@ForAll("scripts") List<List<String>> script) {
    Keyspace keyspace = new Keyspace(System::currentTimeMillis);
    ServerContext context = new ServerContext(keyspace, new Settings());
    Dispatcher dispatcher = CommandFamilies.dispatcher(context);
    ClientState client = context.connect("fuzz", "fuzz");
    for (List<String> command : script) {
      List<byte[]> argv = new ArrayList<>();
      for (String s : command) {
        argv.add(s.getBytes(StandardCharsets.UTF_8));
      }
      Dispatcher.Outcome outcome = dispatcher.execute(client, argv);
      Reply reply = outcome.reply();
      if (reply instanceof Reply.Error e) {
        assertThat(e.text()).as("reply to %s", command).doesNotStartWith("ERR internal error");
      }
      for (int protocol = 2; protocol <= 3; protocol++) {
        ByteBuf out = Unpooled.buffer();
        RespEncoder.encode(reply, protocol, out);
        assertThat(out.readableBytes()).isPositive();
        out.release();
      }
      assertThat(outcome.durable().toCompletableFuture().isDone()).isTrue();
    }
    if (client.inTransaction()) {
      dispatcher.execute(client, List.of("DISCARD".getBytes(StandardCharsets.UTF_8)));
    }
    assertThat(keyspace.usedBytes()).isNotNegative();
  }
}
