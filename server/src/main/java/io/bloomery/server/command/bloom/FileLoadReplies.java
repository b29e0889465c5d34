package io.bloomery.server.command.bloom;

import io.bloomery.server.command.CommandException;
import io.bloomery.server.command.Errors;
import io.bloomery.server.persistence.load.FileLoads;
import io.bloomery.server.persistence.load.LoadException;
import io.bloomery.server.resp.ClientText;
import io.bloomery.server.resp.Reply;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reply to a step of a file load or dump that runs off the event loop ({@link FileLoads#offLoop}): a single
 * node's {@code BF.LOADCHUNK} and {@code BF.SCANDUMP}, and a cluster node's last {@code BF.LOADCHUNK}, answer the same
 * way whatever the step throws, and always answer.
 */
public final class FileLoadReplies {
  private static final Logger LOG = LoggerFactory.getLogger(FileLoadReplies.class);

  private FileLoadReplies() {}

  /**
   * Runs {@code work} on {@code loads}' off-loop thread and answers what the stage it returns completes with. A
   * command or load refusal answers its error, running out of memory answers {@code OOM} (after {@code
   * outOfMemory} runs), anything else, or a stage that fails, answers an error naming {@code what}. If the thread
   * takes no more work (the server is shutting down), {@code refused} runs and the answer says so.
   */
  public static CompletionStage<Reply> offLoop(FileLoads loads, String what, Supplier<CompletionStage<Reply>> work,
      Runnable refused, Runnable outOfMemory) {
    CompletableFuture<Reply> reply = new CompletableFuture<>();
    boolean accepted = loads.offLoop(() -> {
      try {
        work.get().whenComplete((r, failure) -> reply.complete(failure == null ? r
            : Reply.error(ClientText.escape("ERR " + what + " failed: " + message(failure)))));
      } catch (CommandException e) {
        reply.complete(Reply.error(e.reply()));
      } catch (LoadException e) {
        reply.complete(Reply.error(e.reply()));
      } catch (OutOfMemoryError e) {
        outOfMemory.run();
        reply.complete(Reply.error(Errors.OOM));
      } catch (RuntimeException | Error e) { // the reply must complete, or the connection would wait forever
        LOG.error("{} failed", ClientText.escape(what), e);
        reply.complete(Reply.error("ERR internal error: " + e.getClass().getSimpleName()));
      }
    });
    if (!accepted) {
      refused.run();
      reply.complete(Reply.error("ERR the server is shutting down"));
    }
    return reply;
  }

  private static String message(Throwable failure) {
    Throwable t = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
  }
}
