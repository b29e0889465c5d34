package io.bloomery.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.guard.PostgresCluster;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * A GUARD.ADD of an item whose earlier 1 is still on its way to another client waits for that delivery (to know
 * whether it may answer 1 itself) with no store transaction open: the wait can last seconds, and a transaction held
 * open meanwhile keeps a connection, its snapshot and its row locks. Client A's 1 is held back behind megabytes of
 * replies it does not read; client B adds the same item; PostgreSQL is watched for an idle open transaction.
 */
class GuardDeliveryWaitIT {
  private static final int ECHOES = 64; // 64 MB: more than the kernel's socket buffers take (4 MB send, 4 KB receive)
  private static final int ECHO_BYTES = 1 << 20;

  @Test
  void waitingForAnEarlierDeliveryHoldsNoTransactionOpen() throws Exception {
    String url = PostgresCluster.shared().createDatabase();
    try (BloomeryServer server = GuardFixtures.server("--store", "main=" + url, "--guard-timeout", "60000",
        "--client-output-buffer-limit", "normal 512mb 256mb 0");
        Jedis j = new Jedis("127.0.0.1", server.port(), 60_000);
        Socket a = new Socket()) {
      GuardStoreFaultIT.call(j, "GUARD.RESERVE", "k", "main", "0.01", "1000");
      a.setReceiveBufferSize(4096);
      a.connect(new InetSocketAddress("127.0.0.1", server.port()));
      OutputStream out = a.getOutputStream();
      byte[] payload = new byte[ECHO_BYTES];
      Arrays.fill(payload, (byte) 'e');
      for (int i = 0; i < ECHOES; i++) {
        out.write(("*2\r\n$4\r\nECHO\r\n$" + ECHO_BYTES + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(payload);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
      }
      out.write("*3\r\n$9\r\nGUARD.ADD\r\n$1\r\nk\r\n$1\r\nx\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      awaitUndelivered(j); // A's add committed; its reply waits behind the echoes A does not read

      CompletableFuture<Object> b = CompletableFuture.supplyAsync(() -> {
        try (Jedis other = new Jedis("127.0.0.1", server.port(), 60_000)) {
          return GuardStoreFaultIT.call(other, "GUARD.ADD", "k", "x");
        }
      });
      int idleInTransaction = 0;
      try (Connection watch = DriverManager.getConnection(url);
          PreparedStatement ps = watch.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE datname ="
              + " current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()")) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3); // B waits up to 10 s for A's delivery
        while (System.nanoTime() < end) {
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            idleInTransaction = Math.max(idleInTransaction, rs.getInt(1));
          }
          Thread.sleep(20);
        }
      }
      assertThat(b).as("B waits for A's delivery").isNotDone();
      assertThat(idleInTransaction).as("store transactions left open while B waited").isZero();

      InputStream in = a.getInputStream();
      String tail = readReplies(in);
      assertThat(tail).as("A's reply").isEqualTo(":1\r\n");
      assertThat(b.get(30, TimeUnit.SECONDS)).as("B's reply once A's 1 was delivered").isEqualTo(0L);
    }
  }

  /** Waits until A's add committed and its 1 waits for delivery (this process's ledger holds its mark). */
  private static void awaitUndelivered(Jedis j) throws InterruptedException {
    for (int i = 0; i < 600; i++) {
      if (Long.valueOf(1L).equals(GuardCommandsIT.infoOf(j, "k").get("unacknowledged_items"))) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("A's GUARD.ADD never answered: " + GuardCommandsIT.infoOf(j, "k"));
  }

  /** Reads the echoes' replies and returns the reply after them. */
  private static String readReplies(InputStream in) throws Exception {
    long expected = (long) ECHOES * (("$" + ECHO_BYTES + "\r\n").length() + ECHO_BYTES + 2);
    byte[] buf = new byte[1 << 16];
    long read = 0;
    while (read < expected) {
      int n = in.read(buf, 0, (int) Math.min(buf.length, expected - read));
      assertThat(n).as("the echoes' replies").isPositive();
      read += n;
    }
    StringBuilder tail = new StringBuilder();
    while (!tail.toString().endsWith("\r\n")) {
      int c = in.read();
      assertThat(c).as("A's reply").isNotNegative();
      tail.append((char) c);
    }
    return tail.toString();
  }
}
