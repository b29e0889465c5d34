package io.bloomery.server.command.bloom;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.Errors;
import io.bloomery.server.persistence.load.FileLoads;
import io.bloomery.server.persistence.load.LoadException;
import io.bloomery.server.resp.Reply;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Whatever a step run off the event loop does, the client gets one answer, and the right one. */
class FileLoadRepliesTest {
  private final FileLoads loads = new FileLoads(System::currentTimeMillis);
  private final AtomicInteger refused = new AtomicInteger();
  private final AtomicInteger outOfMemory = new AtomicInteger();

  @AfterEach
  void close() {
    loads.close();
  }

  private Reply answer(Supplier<CompletionStage<Reply>> work) throws Exception {
    return FileLoadReplies.offLoop(loads, "the load of key 'a\r\nb'", work, refused::incrementAndGet,
        outOfMemory::incrementAndGet).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void theStagesReplyIsTheAnswer() throws Exception {
    assertThat(answer(() -> CompletableFuture.completedFuture(Reply.OK))).isEqualTo(Reply.OK);
    assertThat(refused).hasValue(0);
  }

  @Test
  void aStageThatFailsAnswersAnErrorOnOneLine() throws Exception {
    Reply r = answer(() -> CompletableFuture.failedFuture(new IllegalStateException("disk\nfull")));
    assertThat(r).isEqualTo(Reply.error("ERR the load of key 'a\\r\\nb' failed: disk\\nfull"));
  }

  @Test
  void refusalsAnswerTheirOwnErrors() throws Exception {
    assertThat(answer(() -> {
      throw new LoadException("ERR invalid Bloomery file: short");
    })).isEqualTo(Reply.error("ERR invalid Bloomery file: short"));
    assertThat(answer(() -> {
      throw new CommandException("ERR item exists");
    })).isEqualTo(Reply.error("ERR item exists"));
    assertThat(outOfMemory).hasValue(0);
  }

  @Test
  void runningOutOfMemoryAnswersOomAndIsCounted() throws Exception {
    assertThat(answer(() -> {
      throw new OutOfMemoryError("Java heap space");
    })).isEqualTo(Reply.error(Errors.OOM));
    assertThat(outOfMemory).hasValue(1);
  }

  @Test
  void anythingElseStillAnswers() throws Exception {
    assertThat(answer(() -> {
      throw new ArrayIndexOutOfBoundsException(3);
    })).isEqualTo(Reply.error("ERR internal error: ArrayIndexOutOfBoundsException"));
  }

  @Test
  void closedLoadsRunNothingAndSaySo() throws Exception {
    loads.close();
    AtomicInteger ran = new AtomicInteger();
    assertThat(answer(() -> {
      ran.incrementAndGet();
      return CompletableFuture.completedFuture(Reply.OK);
    })).isEqualTo(Reply.error("ERR the server is shutting down"));
    assertThat(ran).hasValue(0);
    assertThat(refused).hasValue(1);
  }
}
