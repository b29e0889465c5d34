package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.command.CommandRouter;
import io.bloomery.server.command.CommandSpec;
import io.bloomery.server.resp.Reply;
import io.bloomery.server.state.ClientState;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Replies that come from another thread (a cluster node's writes wait for their shard's log) land in batches and out
 * of order, while the event loop pays the ones before them: every client still gets every reply once, in command
 * order, and the commands that wait behind them run after them.
 */
class DeferredRepliesTest {
  private static final long SEED = Long.getLong("deferred.seed", System.nanoTime());

  /** Defers ECHO's reply to a thread that completes what queued in batches of random size, in a random order. */
  private static final class LaterEcho implements CommandRouter {
    final LinkedBlockingQueue<Runnable> queued = new LinkedBlockingQueue<>();
    final AtomicBoolean running = new AtomicBoolean(true);
    final Thread completer;

    LaterEcho(Random random) {
      completer = Thread.ofPlatform().name("later-echo").start(() -> {
        List<Runnable> batch = new ArrayList<>();
        while (running.get()) {
          try {
            Runnable first = queued.poll(10, TimeUnit.MILLISECONDS);
            if (first == null) {
              continue;
            }
            batch.add(first);
            queued.drainTo(batch, random.nextInt(200));
            Collections.shuffle(batch, random);
            for (Runnable r : batch) {
              r.run();
              if (random.nextInt(50) == 0) {
                Thread.yield(); // lets the event loop pay part of the batch while the rest lands
              }
            }
            batch.clear();
          } catch (InterruptedException e) {
            return;
          }
        }
      });
    }

    @Override
    public CompletionStage<Reply> route(ClientState client, CommandSpec spec, List<byte[]> argv) {
      if (spec == null || !spec.name().equals("echo")) {
        return null;
      }
      CompletableFuture<Reply> reply = new CompletableFuture<>();
      byte[] text = argv.get(1);
      queued.add(() -> reply.complete(Reply.bulk(text)));
      return reply;
    }

    @Override
    public boolean pipelines(CommandSpec spec, List<byte[]> argv) {
      return spec.name().equals("echo");
    }
  }

  @Test
  void repliesThatLandTogetherAndOutOfOrderGoOutOnceEachInOrder() throws Exception {
    System.out.printf("DeferredRepliesTest: seed %d (replay with -Ddeferred.seed=%d)%n", SEED, SEED);
    int clients = 4;
    int perClient = 4_000;
    LaterEcho router = new LaterEcho(new Random(SEED));
    try (BloomeryServer server = TestServer.start()) {
      server.dispatcher().router(router);
      List<List<String>> results = RawClient.concurrently(server.port(), clients, (id, client) -> {
        // rounds of 1-64 commands, each round's replies read before the next is sent, as a pipelining client does:
        // every round ends on a last reply, which nothing after it would flush if it were missed
        Random sizes = new Random(SEED + id);
        List<String> replies = new ArrayList<>();
        int i = 0;
        while (i < perClient) {
          ByteArrayOutputStream pipeline = new ByteArrayOutputStream();
          int expected = 0;
          for (int n = 1 + sizes.nextInt(64); n > 0 && i < perClient; n--, i++) {
            pipeline.write(RawClient.encode("ECHO", "c" + id + "-" + i));
            expected++;
            if (i % 300 == 0) {
              pipeline.write(RawClient.encode("PING")); // not pipelined: runs once every reply before it went out
              expected++;
            }
          }
          client.send(pipeline.toByteArray());
          for (; expected > 0; expected--) {
            replies.add(client.reply());
          }
        }
        return replies;
      }, () -> {});
      for (int c = 0; c < clients; c++) {
        List<String> replies = results.get(c);
        int r = 0;
        for (int i = 0; i < perClient; i++) {
          String text = "c" + c + "-" + i;
          assertThat(replies.get(r++)).as("seed %d: client %d command %d", SEED, c, i)
              .isEqualTo("$" + text.getBytes(StandardCharsets.UTF_8).length + "\r\n" + text + "\r\n");
          if (i % 300 == 0) {
            assertThat(replies.get(r++)).as("seed %d: client %d PING after %d", SEED, c, i).isEqualTo("+PONG\r\n");
          }
        }
      }
    } finally {
      router.running.set(false);
      router.completer.join(5_000);
    }
  }
}
